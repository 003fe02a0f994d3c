package controller

import (
	"bytes"
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
// configuration and swaps it in whole. A key of the black list refuses the
// whole update (NO_PERMISSION); keys this controller does not know are
// ignored, as Apache's properties2Object ignores them.
func (c *Controller) updateConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if len(req.Body) == 0 {
		return remoting.NewResponse(req, remoting.Success, "")
	}
	props, err := config.ReadProperties(bytes.NewReader(req.Body))
	if err != nil {
		return remoting.NewResponse(req, remoting.SystemError, "string2Properties error")
	}
	cur := c.live.Load()
	black := append([]string{"configBlackList", "configStorePath", "rocketmqHome"}, strings.Split(cur.ConfigBlackList, ";")...)
	for _, kv := range props {
		if slices.Contains(black, kv[0]) {
			return remoting.NewResponse(req, remoting.NoPermission, "Can not update config in black list.")
		}
	}
	next := *cur
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
	return remoting.NewResponse(req, remoting.Success, "")
}
