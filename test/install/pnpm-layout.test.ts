import { describeInstalledLayout } from "./installed-layout-suite.js";

// pnpm's strict layout: the project declares only `skillbox`, so nothing else is reachable from it.
describeInstalledLayout("pnpm");
