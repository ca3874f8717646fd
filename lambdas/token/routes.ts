/**
 * Where the built-in issuer answers, relative to the API's base URL (the issuer URL). A module of its own,
 * free of the AWS SDK, because the CDK construct adds these routes: an app that installs the library loads
 * it at synthesis without the signer's KMS client.
 */
export const TOKEN_PATH = '/oauth/token';
export const JWKS_PATH = '/.well-known/jwks.json';
export const DISCOVERY_PATH = '/.well-known/openid-configuration';
