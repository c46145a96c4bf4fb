// The events feature area. (Filled in by its issue.)
import type { Module } from '../deps.js';

export const eventsModule: Module = { name: 'events' };
