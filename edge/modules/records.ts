// The records feature area. (Filled in by its issue.)
import type { Module } from '../deps.js';

export const recordsModule: Module = { name: 'records' };
