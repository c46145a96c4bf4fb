// The phone feature area. (Filled in by its issue.)
import type { Module } from '../deps.js';

export const phoneModule: Module = { name: 'phone' };
