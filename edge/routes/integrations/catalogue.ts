// The integration catalogue (spec: `/upstream/integration-use-cases/:category`): the providers
// available for a category (Shipping, Inventory, Payments, Messaging) with the JSON Schema of
// each one's configuration, from config/integration-catalogue.json. Every schema is compiled when
// the module loads, so a broken catalogue stops start-up instead of reaching a client.
import { Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import catalogueFile from '../../../config/integration-catalogue.json' with { type: 'json' };
import { route, type RouteDef } from '../../route.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export interface IntegrationProvider {
  id: string;
  name: string;
  category: string;
  description: string;
  configSchema: Record<string, unknown>;
}

type CatalogueFile = { categories: Record<string, Array<Omit<IntegrationProvider, 'category'>>> };

/** Checks the catalogue and indexes it by lower-cased category. Throws naming the bad entry. */
export function loadCatalogue(file: CatalogueFile = catalogueFile as CatalogueFile): Map<string, IntegrationProvider[]> {
  const ajv = new Ajv({ strict: true, allErrors: true });
  addFormats(ajv);
  const out = new Map<string, IntegrationProvider[]>();
  for (const [category, providers] of Object.entries(file.categories)) {
    const seen = new Set<string>();
    const list: IntegrationProvider[] = [];
    for (const p of providers) {
      const where = `integration catalogue ${category}/${p.id}`;
      if (!p.id || !p.name || !p.description || typeof p.configSchema !== 'object') {
        throw new Error(`${where}: id, name, description and configSchema are required`);
      }
      if (seen.has(p.id)) throw new Error(`${where}: duplicate provider id`);
      seen.add(p.id);
      try {
        ajv.compile(p.configSchema);
      } catch (err) {
        throw new Error(`${where}: configSchema is not a valid JSON Schema: ${(err as Error).message}`);
      }
      list.push({ id: p.id, name: p.name, category, description: p.description, configSchema: p.configSchema });
    }
    out.set(category.toLowerCase(), list);
  }
  return out;
}

// The file is part of the build: checked once per process, not again by every node a process starts.
let checkedCatalogue: Map<string, IntegrationProvider[]> | undefined;

export function integrationRoutes(): RouteDef[] {
  const catalogue = (checkedCatalogue ??= loadCatalogue());
  return [
    route({
      method: 'GET',
      path: '/upstream/integration-use-cases/:category',
      auth: 'staff',
      tag: 'Integrations',
      summary: 'Providers available for an integration category, with their configuration schemas',
      description: `Categories: ${[...new Set(Object.keys(catalogueFile.categories))].join(', ')} (case-insensitive). \`configSchema\` is a JSON Schema (draft-07); properties marked \`writeOnly\` are secrets. An unknown category answers an empty array.`,
      params: Type.Object({ category: Type.String({ minLength: 1, maxLength: 64 }) }),
      response: Type.Array(
        Type.Object({
          id: Type.String(),
          name: Type.String(),
          category: Type.String(),
          description: Type.String(),
          configSchema: Type.Unknown({ description: 'JSON Schema (draft-07) of the provider configuration' }),
        }),
      ),
      handler: (ctx) => catalogue.get(ctx.params.category.toLowerCase()) ?? [],
    }),
  ];
}
