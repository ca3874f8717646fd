/** What every Account Management API handler is given, and the parameter readers they share. */
import type { Caller } from './access-tokens';
import type { ApplicationChangeListener } from './admin';
import { AdminApiError } from './admin-errors';
import type { PlatformModel, Service } from './model';
import type { ParamHash } from './params';

export interface AdminContext {
  readonly model: PlatformModel;
  readonly caller: Caller;
  /** The services of the caller's provider. */
  readonly services: readonly Service[];
  /** Query and form parameters, merged. */
  readonly values: ParamHash;
  /** Sends a change's webhook, when the provider lets API changes send them. */
  readonly notify: ApplicationChangeListener;
  /** Epoch ms, by the platform's clock. */
  readonly now: number;
}

/** A parameter's trimmed text; a missing, blank or non-text one is undefined. */
export function text(values: ParamHash, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** A parameter that must be given: a blank one is 422 "<Name> can't be blank". */
export function required(values: ParamHash, name: string): string {
  const value = text(values, name);
  if (value === undefined) throw AdminApiError.invalid({ [name]: ["can't be blank"] });
  return value;
}

/** ActiveRecord's false values; any other non-blank text is true. */
const FALSE_TEXTS = new Set(['0', 'f', 'F', 'false', 'FALSE', 'off', 'OFF']);

/** A boolean as Rails casts a parameter's text. */
export function railsBoolean(value: string): boolean {
  return !FALSE_TEXTS.has(value);
}
