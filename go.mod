module searxgate

go 1.26.0

require (
	github.com/PuerkitoBio/goquery v1.14.0
	github.com/tidwall/gjson v1.20.3
	github.com/valyala/fasthttp v1.78.0
	go.etcd.io/bbolt v1.5.0
)

require (
	github.com/andybalholm/cascadia v1.3.5 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/molecule-man/go-brrr v1.3.1 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.3.0 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
