export { studioAssetsDirectory } from "./studio-assets-directory.js";
