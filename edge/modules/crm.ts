// The crm feature area. (Filled in by its issue.)
import type { Module } from '../deps.js';

export const crmModule: Module = { name: 'crm' };
