/** Seeds 1..500 of the 1,000 of weft's main reliability test (testSeedChunks.ts). */

import { seedChunkTests } from "./testSeedChunks.ts";

seedChunkTests([0, 1]);
