/**
 * The error of a setting that cannot be used, naming the setting: every settings reader (environment,
 * stack file, CDK context and props, the plugin's settings) and the contract's own parsers throw it.
 */
export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    readonly problem: string,
  ) {
    super(`Invalid configuration: ${setting} ${problem}`);
    this.name = 'ConfigError';
  }
}
