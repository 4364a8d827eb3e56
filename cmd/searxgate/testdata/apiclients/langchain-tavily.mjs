// @langchain/tavily's tools pointed at searxgate by apiBaseUrl alone.
import { TavilySearch, TavilyExtract } from "@langchain/tavily";

const opts = { tavilyApiKey: process.env.SEARXGATE_KEY, apiBaseUrl: process.env.SEARXGATE_BASE };
const search = await new TavilySearch({ ...opts, maxResults: 5 }).invoke({ query: "tidal locking" });
const extract = await new TavilyExtract(opts).invoke({ urls: [search.results[0].url] });
console.log(JSON.stringify({ search, extract }));
