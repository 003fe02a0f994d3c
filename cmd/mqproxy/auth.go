package main

import (
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/acl"
	"github.com/rocketgo/rocketgo/auth"
	"github.com/rocketgo/rocketgo/proxy"
	"github.com/rocketgo/rocketgo/remoting"
)

// startAuth turns ACL 2.0 on for p (rmq-proxy.json's authenticationEnabled,
// authorizationEnabled): the calls are checked against the brokers' users
// and ACLs, and p signs its own calls with innerClientAuthenticationCredentials
// (the brokers check them: without them, every forwarded call is refused
// once the brokers have authentication on).
func startAuth(p *proxy.Server, cfg proxy.Config, log zerolog.Logger) error {
	if s := strings.TrimSpace(cfg.InnerClientAuthenticationCredentials); s != "" {
		var c struct{ AccessKey, SecretKey string }
		if err := json.Unmarshal([]byte(s), &c); err != nil {
			return fmt.Errorf("innerClientAuthenticationCredentials is not JSON credentials: %w", err)
		}
		secret := []byte(c.SecretKey)
		if err := p.SignOutgoing(func(req *remoting.Command) {
			req.Set("AccessKey", c.AccessKey)
			req.Set("Signature", string(acl.Sign(nil, secret, req)))
		}); err != nil {
			return err
		}
	}
	if !cfg.AuthenticationEnabled && !cfg.AuthorizationEnabled {
		return nil
	}
	p.SetGuard(auth.NewGRPC(auth.NewRemote(p.AuthLookup, log), auth.Config{
		Authentication:          cfg.AuthenticationEnabled,
		Authorization:           cfg.AuthorizationEnabled,
		AuthenticationWhitelist: auth.ParseWhitelist(cfg.AuthenticationWhitelist),
		AuthorizationWhitelist:  auth.ParseWhitelist(cfg.AuthorizationWhitelist),
	}))
	log.Info().Bool("authenticationEnabled", cfg.AuthenticationEnabled).Bool("authorizationEnabled", cfg.AuthorizationEnabled).
		Msg("acl 2.0 on: users and ACLs read from the brokers")
	return nil
}
