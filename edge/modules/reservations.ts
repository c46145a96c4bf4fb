// The reservations feature area. (Filled in by its issue.)
import type { Module } from '../deps.js';

export const reservationsModule: Module = { name: 'reservations' };
