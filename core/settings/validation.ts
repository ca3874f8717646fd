/**
 * Checks shared by every settings reader (environment, stack file, CDK context and props). Each throws a
 * ConfigError naming the setting, so a bad value stops start-up with a message a provider can act on.
 */

import { ConfigError } from '../../contract/config-error';

export { ConfigError };

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function oneOf<T extends string>(setting: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    throw new ConfigError(setting, `must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
  }
  return value as T;
}

export function integer(setting: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(setting, `must be an integer from ${min} to ${max} (got ${JSON.stringify(value)})`);
  }
  return value;
}

export function nonEmpty(setting: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ConfigError(setting, 'is required and must be a non-empty string');
  }
  return value;
}

export function optionalNonEmpty(setting: string, value: unknown): string | undefined {
  return value === undefined ? undefined : nonEmpty(setting, value);
}

/** A settings object whose keys must all be known, so a misspelt setting stops start-up too. */
export function knownFields(
  setting: string,
  value: unknown,
  known: readonly string[],
): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(setting, 'must be an object');
  }
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      throw new ConfigError(`${setting}.${key}`, `is not a known setting (known: ${known.join(', ')})`);
    }
  }
  return value as Record<string, unknown>;
}

/** A header name as HTTP allows it, lower-cased: API Gateway and Node hand headers over lower-cased. */
export function headerName(setting: string, value: unknown): string {
  const name = nonEmpty(setting, value);
  if (!HEADER_NAME.test(name)) throw new ConfigError(setting, `is not a valid HTTP header name: ${name}`);
  return name.toLowerCase();
}

/** An http or https URL; throws a ConfigError naming the setting otherwise. */
export function httpUrl(setting: string, value: unknown): URL {
  const text = nonEmpty(setting, value);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(setting, `is not a URL: ${text}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(setting, `must use http or https (got ${url.protocol})`);
  }
  return url;
}

/** Loose on purpose: one `@`, a dot in the domain, no spaces. SNS and the mail server judge the rest. */
const EMAIL_ADDRESS = /^[^@\s,]+@[^@\s,]+\.[^@\s,]+$/;

/** An e-mail address (an SNS email subscription, an alarm recipient). */
export function emailAddress(setting: string, value: unknown): string {
  const text = nonEmpty(setting, value).trim();
  if (!EMAIL_ADDRESS.test(text)) {
    throw new ConfigError(
      setting,
      `must be an email address such as ops@example.com (got ${JSON.stringify(value)})`,
    );
  }
  return text;
}
