import { humanNotifySuite } from "./support/human-notify-suite.js";
import { storeUrl } from "./support/engines.js";

humanNotifySuite("sqlite", () => storeUrl("sqlite"));
