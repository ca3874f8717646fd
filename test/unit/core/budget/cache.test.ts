import { describeOnTopologies } from '../../../support/redis-topology';
import { describeAccessCache } from '../cache-suite';

// The in-memory stand-in has no command timeout: ioredis-mock's TIME is off by up to a second and a
// half, so the hot-path deadline runs only where it is set explicitly (and in the same suite on Redis).
describeOnTopologies(['in-memory'], describeAccessCache);
