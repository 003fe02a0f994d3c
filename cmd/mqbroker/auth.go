package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/acl"
	"github.com/rocketgo/rocketgo/auth"
	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/remoting"
)

// startAuth opens ACL 2.0's users and ACLs in ${storePathRootDir}/config
// (Apache's broker overrides authConfigPath with it), creates the
// initAuthenticationUser and innerClientAuthenticationCredentials users
// (super users) when absent, imports plain_acl.yml with
// migrateAuthFromV1Enabled, and returns the admin service and, with
// authenticationEnabled or authorizationEnabled, the interceptor (nil
// otherwise) and, with localProxy (--enable-proxy), the in-process
// proxy's gRPC guard: the proxy checks its calls and the broker lets its
// in-process connection through, as Apache's local mode skips the
// broker's pipeline. Apache opens its stores whatever the keys; so does
// this.
func startAuth(cfg *broker.Config, localProxy bool, log zerolog.Logger) (*auth.Service, *auth.Interceptor, *auth.GRPC, error) {
	if err := checkProviders(cfg); err != nil {
		return nil, nil, nil, err
	}
	dir := filepath.Join(cfg.Store.StorePathRootDir, "config")
	if cfg.AuthConfigPath != "" && cfg.AuthConfigPath != dir {
		log.Warn().Str("authConfigPath", cfg.AuthConfigPath).Str("used", dir).
			Msg("authConfigPath is replaced by ${storePathRootDir}/config, as Apache's broker does")
	}
	cfg.AuthConfigPath = dir
	st, err := auth.OpenStore(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	svc := auth.NewService(st)
	if s := string(cfg.InitAuthenticationUser); strings.TrimSpace(s) != "" {
		var u struct{ Username, Password string }
		if err := json.Unmarshal([]byte(s), &u); err != nil {
			return nil, nil, nil, fmt.Errorf("initAuthenticationUser is not a JSON user: %w", err)
		}
		if err := svc.EnsureSuper(u.Username, u.Password); err != nil {
			return nil, nil, nil, fmt.Errorf("init authentication user: %w", err)
		}
	}
	if ak, sk, ok, err := innerCredentials(cfg); err != nil {
		return nil, nil, nil, err
	} else if ok {
		if err := svc.EnsureSuper(ak, sk); err != nil {
			return nil, nil, nil, fmt.Errorf("init inner client authentication credentials: %w", err)
		}
	}
	if cfg.MigrateAuthFromV1Enabled {
		accts, err := acl.PlainAccounts(cfg.RocketmqHome)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("migrateAuthFromV1Enabled: %w", err)
		}
		for _, a := range accts {
			if err := svc.Migrate(a); err != nil {
				// Apache logs and goes on with the next account.
				log.Error().Err(err).Str("accessKey", a.AccessKey).Msg("[ACL MIGRATE] account not migrated")
			}
		}
	}
	if !cfg.AuthenticationEnabled && !cfg.AuthorizationEnabled {
		return svc, nil, nil, nil
	}
	ac := auth.Config{
		Authentication:          cfg.AuthenticationEnabled,
		Authorization:           cfg.AuthorizationEnabled,
		Cluster:                 cfg.BrokerClusterName,
		AuthenticationWhitelist: auth.ParseWhitelist(cfg.AuthenticationWhitelist),
		AuthorizationWhitelist:  auth.ParseWhitelist(cfg.AuthorizationWhitelist),
		TrustLocal:              localProxy,
	}
	in := auth.NewInterceptor(st, ac, log)
	var guard *auth.GRPC
	if localProxy {
		guard = auth.NewGRPC(st, ac)
	}
	log.Info().Bool("authenticationEnabled", cfg.AuthenticationEnabled).Bool("authorizationEnabled", cfg.AuthorizationEnabled).
		Str("authConfigPath", dir).Bool("localProxyChecked", localProxy).Msg("acl 2.0 on")
	return svc, in, guard, nil
}

// innerCredentials reads innerClientAuthenticationCredentials
// ({"accessKey":..,"secretKey":..}).
func innerCredentials(cfg *broker.Config) (ak, sk string, ok bool, err error) {
	s := string(cfg.InnerClientAuthenticationCredentials)
	if strings.TrimSpace(s) == "" {
		return "", "", false, nil
	}
	var c struct{ AccessKey, SecretKey string }
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return "", "", false, fmt.Errorf("innerClientAuthenticationCredentials is not JSON credentials: %w", err)
	}
	return c.AccessKey, c.SecretKey, true, nil
}

// signOutgoing signs the broker's own calls with the inner credentials,
// as Apache's BrokerOuterAPI adds an AclClientRPCHook with them.
func signOutgoing(b *broker.Broker, cfg *broker.Config) error {
	ak, sk, ok, err := innerCredentials(cfg)
	if err != nil || !ok {
		return err
	}
	secret := []byte(sk)
	b.Role.SignOutgoing(func(req *remoting.Command) {
		req.Set("AccessKey", ak)
		req.Set("Signature", string(acl.Sign(nil, secret, req)))
	})
	return nil
}

// checkProviders refuses provider and strategy classes other than
// Apache's own: they name Java code rocketgo cannot run.
func checkProviders(cfg *broker.Config) error {
	for _, p := range []struct{ key, val, pkg string }{
		{"authenticationProvider", cfg.AuthenticationProvider, "authentication.provider.DefaultAuthenticationProvider"},
		{"authenticationMetadataProvider", cfg.AuthenticationMetadataProvider, "authentication.provider.LocalAuthenticationMetadataProvider"},
		{"authenticationStrategy", cfg.AuthenticationStrategy, "authentication.strategy.StatelessAuthenticationStrategy authentication.strategy.StatefulAuthenticationStrategy"},
		{"authorizationProvider", cfg.AuthorizationProvider, "authorization.provider.DefaultAuthorizationProvider"},
		{"authorizationMetadataProvider", cfg.AuthorizationMetadataProvider, "authorization.provider.LocalAuthorizationMetadataProvider"},
		{"authorizationStrategy", cfg.AuthorizationStrategy, "authorization.strategy.StatelessAuthorizationStrategy authorization.strategy.StatefulAuthorizationStrategy"},
	} {
		v := strings.TrimSpace(p.val)
		if v == "" {
			continue
		}
		ok := false
		for _, c := range strings.Fields(p.pkg) {
			ok = ok || v == "org.apache.rocketmq.auth."+c
		}
		if !ok {
			return fmt.Errorf("%s=%s: rocketgo runs only Apache's default classes", p.key, v)
		}
	}
	return nil
}
