/** Seeds 501..1000 of the 1,000 of weft's main reliability test (testSeedChunks.ts). */

import { seedChunkTests } from "./testSeedChunks.ts";

seedChunkTests([2, 3]);
