// The storefront feature area. (Filled in by its issue.)
import type { Module } from '../deps.js';

export const storefrontModule: Module = { name: 'storefront' };
