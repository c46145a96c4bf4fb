// The chat feature area. (Filled in by its issue.)
import type { Module } from '../deps.js';

export const chatModule: Module = { name: 'chat' };
