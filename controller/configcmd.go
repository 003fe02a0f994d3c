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

// remoteKeys are the keys UPDATE_CONTROLLER_CONFIG may change (unless
// configBlackList lists them): those read while the controller runs. Every
// other key the controller knows is refused as if black-listed, whatever
// configBlackList says: where the raft log lives, who the peers are, what
// the ports bind and accept, who may sign requests take effect at the next
// start, and the file written here would carry them there.
var remoteKeys = map[string]bool{
	"enableElectUncleanMaster":    true,
	"notifyBrokerRoleChanged":     true,
	"scanNotActiveBrokerInterval": true,
	"scanInactiveMasterInterval":  true,
	"electMasterMaxRetryCount":    true,
}

// startKeys are the keys of Apache's ControllerConfig and NettyServerConfig
// that rocketgo does not hold but refuses likewise.
var startKeys = []string{"rocketmqHome", "controllerType", "mappedFileSize", "listenPort", "jraftConfig",
	"authConfigPath", "authenticationWhitelist", "authorizationWhitelist"}

// knownKeys are the keys of Config.
var knownKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, kv := range config.Pairs(DefaultConfig()) {
		m[kv[0]] = true
	}
	return m
}()

// refusedKey reports a key an update may not set.
func (c *Controller) refusedKey(key string) bool {
	if knownKeys[key] && !remoteKeys[key] || slices.Contains(startKeys, key) || strings.HasPrefix(key, "jRaft") {
		return true
	}
	return slices.Contains(strings.Split(c.live.Load().ConfigBlackList, ";"), key)
}

// hasControl reports a control character: a value with a line break would
// forge lines in GET_CONTROLLER_CONFIG's answer and the file written.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// updateConfig applies the keys of the body to a copy of the live
// configuration, swaps it in whole and writes it to configStorePath, on a
// worker (the file is written there, never on an event loop). A refused key
// (refusedKey) refuses the whole update (NO_PERMISSION), as does a control
// character (INVALID_PARAMETER); keys this controller does not know are
// ignored, as Apache's properties2Object ignores them.
func (c *Controller) updateConfig(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	if len(req.Body) == 0 {
		return remoting.NewResponse(req, remoting.Success, "")
	}
	props, err := config.ReadProperties(bytes.NewReader(req.Body))
	if err != nil {
		return remoting.NewResponse(req, remoting.SystemError, "string2Properties error")
	}
	for _, kv := range props {
		if hasControl(kv[0]) || hasControl(kv[1]) {
			c.warn.Warn().Stringer("remote", conn.RemoteAddr).Str("key", short(kv[0])).Msg("controller config update refused: control character")
			return remoting.NewResponse(req, remoting.InvalidParameter, "Can not update config with a control character in a key or value.")
		}
		if c.refusedKey(kv[0]) {
			c.warn.Warn().Stringer("remote", conn.RemoteAddr).Str("key", short(kv[0])).Msg("controller config update refused: key not remotely changeable")
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
	} else if err := config.WriteFile(path, config.AppendProperties(nil, config.FilePairs(next))); err != nil {
		c.log.Error().Err(err).Str("configStorePath", path).Msg("controller config not persisted")
	}
	return remoting.NewResponse(req, remoting.Success, "")
}
