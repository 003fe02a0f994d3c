package namesrv

// GET_NAMESRV_CONFIG (319) and UPDATE_NAMESRV_CONFIG (318), which mqadmin's
// getNamesrvConfig / updateNamesrvConfig send: the config in force as
// properties text, and changes to it. The keys rocketgo reads per request
// take effect at once (liveKeys); the others are read at start (ports,
// paths, threads, the scan period, the route table's options) and are
// refused for a restart with a log line, not silently taken. Apache's
// black list (configBlackList, configStorePath, kvConfigPath) answers
// NO_PERMISSION as Apache's does. Apache also writes the result to
// configStorePath; rocketgo does not (a restart reads the -c file only, as
// Apache's does).

import (
	"bytes"
	"strings"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/remoting"
)

// cfg is the config in force.
func (h *handlers) cfg() *Config { return h.live.Load() }

// blackListKeys is Apache's default configBlackList.
var blackListKeys = []string{"configBlackList", "configStorePath", "kvConfigPath"}

// liveKeys are the keys the handlers read per request.
var liveKeys = map[string]bool{"orderMessageEnable": true, "returnOrderTopicConfigToBroker": true,
	"enableAllTopicList": true, "enableTopicList": true, "registerBodyMaxInflatedBytes": true}

func (h *handlers) getConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var b strings.Builder
	for _, kv := range config.Pairs(h.cfg()) {
		b.WriteString(kv[0] + "=" + kv[1] + "\n")
	}
	return success(req, []byte(b.String()))
}

func (h *handlers) updateConfig(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	if len(req.Body) == 0 {
		return success(req, nil)
	}
	pairs, err := config.ReadProperties(bytes.NewReader(req.Body))
	if err != nil {
		return remoting.NewResponse(req, remoting.SystemError, "string2Properties error")
	}
	for _, kv := range pairs {
		for _, k := range blackListKeys {
			if kv[0] == k {
				return remoting.NewResponse(req, remoting.NoPermission, "Can not update config in black list.")
			}
		}
	}
	remote := ""
	if c != nil {
		remote = c.Remote
	}
	next := *h.cfg()
	var applied, refused []string
	for _, kv := range pairs {
		if !liveKeys[kv[0]] {
			refused = append(refused, kv[0])
			continue
		}
		if err := config.Set(&next, kv[0], kv[1]); err != nil {
			h.log.Warn().Str("remote", remote).Str("key", kv[0]).Err(err).Msg("update name server config: bad value, ignored")
			continue
		}
		applied = append(applied, kv[0])
	}
	if err := next.Validate(); err != nil {
		return remoting.NewResponse(req, remoting.SystemError, err.Error())
	}
	h.live.Store(&next)
	h.log.Info().Str("remote", remote).Strs("applied", applied).Strs("notLive", refused).
		Msg("name server config updated (keys read only at start are not changed)")
	return success(req, nil)
}
