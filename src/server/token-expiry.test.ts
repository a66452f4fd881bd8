import { describe } from "vitest";
import { tokenExpirySuite } from "../../test/support/token-expiry-suite.js";

describe("API token expiry (sqlite)", () => tokenExpirySuite("sqlite"));
