import { describe } from "vitest";
import { operatorRoutesSuite } from "../../../test/support/operator-routes-suite.js";

describe("operator write routes (sqlite)", () => operatorRoutesSuite("sqlite"));
