/** The gateway contract now lives in contract/ (shared with the Lambdas and the local gateway). */
export * from '../contract/gateway-responses';
