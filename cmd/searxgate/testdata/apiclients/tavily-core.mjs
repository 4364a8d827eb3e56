// @tavily/core pointed at searxgate by its apiBaseURL alone: a search of
// 5 results with raw content, then an extract of two of them and one
// page that cannot be read. Prints what the client returned, as JSON.
import { tavily } from "@tavily/core";

const client = tavily({ apiKey: process.env.SEARXGATE_KEY, apiBaseURL: process.env.SEARXGATE_BASE });
const search = await client.search("tidal locking", { maxResults: 5, includeRawContent: "markdown", includeAnswer: true });
const extract = await client.extract([search.results[0].url, search.results[1].url, process.env.SEARXGATE_BAD_URL], { format: "text" });
let refused = "";
try {
  await tavily({ apiKey: "not-a-key-of-this-searxgate", apiBaseURL: process.env.SEARXGATE_BASE }).search("tidal locking");
} catch (e) {
  refused = String(e.message);
}
console.log(JSON.stringify({ search, extract, refused }));
