import { describeInstalledLayout } from "./installed-layout-suite.js";

// npm's flat layout: every tarball installed, dependencies hoisted to the project's node_modules.
describeInstalledLayout("npm");
