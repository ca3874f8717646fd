/** Where the portal is served on the protected API (the constructs add its routes there). */
export const PORTAL_PATH = '/portal';

/** Environment of the portal function beyond the access settings (the construct writes it; index.ts reads it). */
export const PORTAL_ENV = {
  /** The PortalSettings, as JSON. */
  settings: 'PORTAL_SETTINGS',
  /** Secrets Manager ARN of the `account_management` `rw` token the portal writes the platform with. */
  adminTokenSecretArn: 'PORTAL_ADMIN_TOKEN_SECRET_ARN',
} as const;

/** Purposes of the keys derived from the admin token (no secret of the portal's own, so $0 at rest). */
export const DERIVED_KEYS = { signing: 'portal-signing-key', webhook: 'portal-account-webhook' } as const;
