// brave-search pointed at searxgate by its baseUrl alone (the client has
// no option for it: the property is set).
import { BraveSearch } from "brave-search";

const brave = new BraveSearch(process.env.SEARXGATE_KEY);
brave.baseUrl = process.env.SEARXGATE_BASE;
const web = await brave.webSearch("tidal locking", { count: 5, offset: 1, safesearch: "moderate", search_lang: "en", country: "us" });
let refused = "";
try {
  const other = new BraveSearch("not-a-key-of-this-searxgate");
  other.baseUrl = process.env.SEARXGATE_BASE;
  await other.webSearch("tidal locking");
} catch (e) {
  refused = String(e.message);
}
console.log(JSON.stringify({ web, refused }));
