// The checkin feature area. (Filled in by its issue.)
import type { Module } from '../deps.js';

export const checkinModule: Module = { name: 'checkin' };
