package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/api"
)

// validateAPIKeys checks --api-key and --api-key-file: every key long
// enough, the file readable.
func (c *Config) validateAPIKeys(bad func(flagName, format string, args ...any)) {
	var k api.Keys
	if err := k.Set(c.APIKeys); err != nil {
		bad("api-key", "%v", err)
	}
	if c.APIKeyFile == "" {
		return
	}
	keys, err := api.ReadKeyFile(c.APIKeyFile)
	if err == nil {
		err = k.Set(keys)
	}
	if err != nil {
		bad("api-key-file", "%v", err)
	}
}

// loadAPIKeys sets the search APIs' keys from --api-key and
// --api-key-file; on an error the keys in use stay.
func (a *App) loadAPIKeys() error {
	keys := append([]string(nil), a.cfg.APIKeys...)
	if a.cfg.APIKeyFile != "" {
		more, err := api.ReadKeyFile(a.cfg.APIKeyFile)
		if err != nil {
			return err
		}
		keys = append(keys, more...)
	}
	return a.apiKeys.Set(keys)
}

// newAPIs builds the search APIs' doors (package api) over the proxy and
// the page reader, for web.Config.Doors.
func (a *App) newAPIs(client func(*fasthttp.RequestCtx) string) (map[string]fasthttp.RequestHandler, error) {
	a.apiKeys = &api.Keys{}
	if err := a.loadAPIKeys(); err != nil {
		return nil, err
	}
	// Caught from now on: a SIGHUP before Run reloads once it runs,
	// instead of ending the process.
	a.hup = make(chan os.Signal, 1)
	signal.Notify(a.hup, syscall.SIGHUP)
	exposed := mcpExposed(a.cfg)
	if exposed && a.apiKeys.Len() == 0 {
		a.log.Info("the search APIs (/tavily, /res/v1, /openwebui) are off: searxgate can be reached beyond this machine and no --api-key is set")
	}
	srv := api.New(api.Config{Search: a.proxy, Read: a.reader, Keys: a.apiKeys, Exposed: exposed, Client: client,
		Now: a.clock.Now, Logger: a.log})
	return srv.Routes(), nil
}

// reloadAPIKeys reads the API keys again on each SIGHUP until ctx ends.
// Only how many keys there are is logged, never a key.
func (a *App) reloadAPIKeys(ctx context.Context) {
	defer signal.Stop(a.hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.hup:
			if err := a.loadAPIKeys(); err != nil {
				a.log.Error("SIGHUP: the API keys were not reloaded; the ones in use stay", "err", err)
				continue
			}
			a.log.Info("SIGHUP: API keys reloaded", "keys", a.apiKeys.Len())
		}
	}
}
