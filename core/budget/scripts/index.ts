/**
 * The scripts AccessCache defines on every client at once: the hot path's and the ones every function
 * shares. The reporter's (report-batch-scripts.ts) and the SOAP proxy's (give-back-script.ts) are loaded on
 * first use (cache.ts), so the authorizer's bundle leaves them out.
 */
import { ADMIT_SCRIPT } from './admit-script';
import { CHECK_SCRIPT } from './check-script';
import type { ScriptDefinition } from './lua';
import { RELEASE_SCRIPT } from './release-script';
import { STORE_SCRIPT } from './store-script';

export const SCRIPTS: readonly ScriptDefinition[] = [
  CHECK_SCRIPT,
  STORE_SCRIPT,
  ADMIT_SCRIPT,
  RELEASE_SCRIPT,
];
