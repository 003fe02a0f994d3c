package main

import (
	"fmt"
	"os"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/controller"
	"github.com/rocketgo/rocketgo/namesrv"
)

// embed holds NamesrvConfig's switch for the embedded controller.
type embed struct {
	EnableControllerInNamesrv bool `key:"enableControllerInNamesrv"`
}

// loadConfigs applies every key of the properties file to each config that
// knows it, as Apache's NamesrvStartup gives the same properties to
// NamesrvConfig, NettyServerConfig and ControllerConfig; a key none knows
// is logged once.
func loadConfigs(path string, ns *namesrv.Config, cc *controller.Config, em *embed, log zerolog.Logger) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("config: %w", err) // the PathError names the file
	}
	defer f.Close()
	props, err := config.ReadProperties(f)
	if err != nil {
		return fmt.Errorf("config: %s: %w", path, err)
	}
	targets := []any{ns, cc, em}
	known := make([]map[string]bool, len(targets))
	for i, t := range targets {
		known[i] = map[string]bool{}
		for _, kv := range config.Pairs(t) {
			known[i][kv[0]] = true
		}
	}
	for _, kv := range props {
		used := false
		for i, t := range targets {
			if !known[i][kv[0]] {
				continue
			}
			used = true
			if err := config.Set(t, kv[0], kv[1]); err != nil {
				return fmt.Errorf("config: %s: key %s=%q: %w", path, kv[0], kv[1], err)
			}
		}
		if !used {
			log.Warn().Str("key", kv[0]).Msg("unknown config key ignored")
		}
	}
	return nil
}

// ctlDone is the embedded controller's Done, or nil (never ready) without one.
func ctlDone(c *controller.Controller) <-chan struct{} {
	if c == nil {
		return nil
	}
	return c.Done()
}
