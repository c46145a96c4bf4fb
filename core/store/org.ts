// An organisation as the store keeps it: a few fields every tenant has, and the settings each area
// keeps under a field of its own (actors/org-settings/, auth's securitySettings).
export interface Org {
  orgId: string;
  displayName: string;
  plan?: string;
  createdate: string;
  [field: string]: unknown;
}
