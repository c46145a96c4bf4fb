// The auth feature area. (Filled in by its issue.)
import type { Module } from '../deps.js';

export const authModule: Module = { name: 'auth' };
