import { ADMIT_SCRIPT } from './admit-script';
import { CHECK_SCRIPT } from './check-script';
import type { ScriptDefinition } from './lua';
import { RELEASE_SCRIPT } from './release-script';
import { STORE_SCRIPT } from './store-script';

/**
 * The hot path's and the shared scripts; the reporter's are REPORT_BATCH_SCRIPTS, and the SOAP proxy's
 * GIVE_BACK_SCRIPT (give-back-script.ts): AccessCache loads those on first use.
 */
export const SCRIPTS: readonly ScriptDefinition[] = [
  CHECK_SCRIPT,
  STORE_SCRIPT,
  ADMIT_SCRIPT,
  RELEASE_SCRIPT,
];
