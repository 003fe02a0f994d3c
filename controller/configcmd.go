package controller

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/remoting"
)

// GET_CONTROLLER_CONFIG (1010) and UPDATE_CONTROLLER_CONFIG (1009), as
// ControllerRequestProcessor answers them: the body is java.util.Properties
// text, one key=value a line.

// getConfig answers every key with its current value.
func (c *Controller) getConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var b strings.Builder
	for _, kv := range config.Pairs(*c.live.Load()) {
		b.WriteString(kv[0] + "=" + kv[1] + "\n")
	}
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Body = []byte(b.String())
	return resp
}

// updateConfig applies the keys of the body to a copy of the live
// configuration, swaps it in whole and writes it to configStorePath, on a
// worker (the file is written there, never on an event loop). A key of the
// black list refuses the whole update (NO_PERMISSION); keys this controller
// does not know are ignored, as Apache's properties2Object ignores them.
func (c *Controller) updateConfig(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	if len(req.Body) == 0 {
		return remoting.NewResponse(req, remoting.Success, "")
	}
	props, err := config.ReadProperties(bytes.NewReader(req.Body))
	if err != nil {
		return remoting.NewResponse(req, remoting.SystemError, "string2Properties error")
	}
	black := append([]string{"configBlackList", "configStorePath", "rocketmqHome"}, strings.Split(c.live.Load().ConfigBlackList, ";")...)
	for _, kv := range props {
		if slices.Contains(black, kv[0]) {
			return remoting.NewResponse(req, remoting.NoPermission, "Can not update config in black list.")
		}
	}
	stub := &remoting.Command{Code: req.Code, Opaque: req.Opaque, Serialize: req.Serialize, Began: req.Began}
	if !c.offload(func() { conn.Reply(c.applyConfig(stub, props)) }) {
		return remoting.NewResponse(req, remoting.SystemBusy, "[OVERLOAD]system busy, start flow control for a while")
	}
	return nil
}

// applyConfig sets props on a copy of the live configuration, swaps it in
// and persists it. cfgMu makes concurrent updates apply one after the
// other, each on the result of the previous, and their files land in that
// order. A file that cannot be written leaves the update in force and is
// logged, as Apache's persist does.
func (c *Controller) applyConfig(req *remoting.Command, props [][2]string) *remoting.Command {
	c.cfgMu.Lock()
	defer c.cfgMu.Unlock()
	next := *c.live.Load()
	var changed []string
	for _, kv := range props {
		if err := config.Set(&next, kv[0], kv[1]); err != nil {
			c.warn.Warn().Err(err).Str("key", kv[0]).Msg("controller config key not updated")
			continue
		}
		changed = append(changed, kv[0])
	}
	if err := next.Validate(); err != nil {
		// Apache does not check; a controller must not run on values its
		// own start-up would refuse.
		return remoting.NewResponse(req, remoting.SystemError, err.Error())
	}
	c.live.Store(&next)
	c.log.Info().Strs("keys", changed).Msg("controller config updated")
	path := next.configFile()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		c.log.Error().Err(err).Str("configStorePath", path).Msg("controller config not persisted")
	} else if err := config.WriteFile(path, config.AppendProperties(nil, config.Pairs(next))); err != nil {
		c.log.Error().Err(err).Str("configStorePath", path).Msg("controller config not persisted")
	}
	return remoting.NewResponse(req, remoting.Success, "")
}
