// Package egress is what leaves searxgate for the web.
//
// Every outbound fetch goes through it: the instance list, pages for
// web_url_read, and images for /image_proxy. Searches to instances use
// its Dialer.
//
// Guard checks a URL before it is fetched. It refuses schemes other than
// http and https. It refuses hosts that are, or resolve to, addresses that
// are not public (PublicAddr: every row of the IANA special-purpose
// address registries, special.go). CheckLiteral judges only what the URL
// says and leaves names to the Dialer.
//
// Dialer resolves each name itself and checks every address it gets. So
// neither a URL, nor a redirect, nor a name that changes its answer (DNS
// rebinding) reaches the network searxgate runs in. With a ProxyFunc it
// tunnels through the operator's HTTP proxy with CONNECT. The proxy is
// asked for the checked address, never the name.
//
// Fetcher is the one guarded HTTP client. It checks the URL and each
// redirect with the guard, dials with the Dialer, and bounds the body,
// the time and the redirects. It keeps no cookies. Roots adds the
// operator's CA file to the system's roots.
//
// Each door has its own switch for private addresses (Config.AllowPrivate):
// --allow-private for instances and the list, --reader-allow-private for
// pages, --image-proxy-allow-private for images.
//
// The --egress setting is another thing: it names the replicas that
// share one outbound address.
package egress
