// Every feature area of the service, in start-up order. Adding a module here is all it takes for
// its actors, indexes and routes (and so its OpenAPI entries) to exist.
import type { Module } from './deps.js';

export const modules: Module[] = [];
