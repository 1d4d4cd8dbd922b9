import { render } from "preact";
import { App } from "./app.js";
import "./styles.css";

const root = document.getElementById("app");
if (root === null) throw new Error("Skillbox Studio: index.html has no #app element");
render(<App />, root);
