// The workflow feature area. (Filled in by its issue.)
import type { Module } from '../deps.js';

export const workflowModule: Module = { name: 'workflow' };
