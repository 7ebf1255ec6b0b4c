// The entry file of the soak's threads: threads do not inherit tsx's loader,
// so register it for this thread, then run the soak module (which sees it is
// not the main thread and runs its share of seeds).
import { register } from "tsx/esm/api";

register();
await import("./soak.ts");
