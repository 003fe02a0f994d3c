package proxy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rocketgo/rocketgo/remoting"
)

// ACL 2.0 in cluster mode: the users and ACLs live in the brokers; the
// proxy reads them as Apache's ClusterMetadataService does (one master
// of the cluster, AUTH_GET_USER / AUTH_GET_ACL) and signs what it sends
// to brokers with its inner credentials.

// SignOutgoing has fn add credentials to every request the proxy sends
// to brokers and name servers (cluster mode); call it before Start.
func (s *Server) SignOutgoing(fn func(req *remoting.Command)) error {
	cl, ok := s.rc.(*remoting.Client)
	if !ok {
		return errors.New("proxy: signing is for cluster mode")
	}
	cl.SetSigner(fn)
	return nil
}

// errAuthFetch is a lookup no master answered.
var errAuthFetch = errors.New("proxy: no broker answered the auth lookup")

// AuthLookup asks a master for code (AUTH_GET_USER 3004 or AUTH_GET_ACL
// 3009) with ext; body is nil when the broker has no such user or ACL.
func (s *Server) AuthLookup(code int32, ext map[string]string) (body []byte, err error) {
	ctx, cancel := context.WithTimeout(s.base, 3*time.Second)
	defer cancel()
	addrs, err := s.cluster.masters(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		resp, err := s.cluster.invoke(ctx, a, remoting.NewRequest(code, ext, nil))
		if err != nil {
			continue
		}
		switch resp.Code {
		case remoting.Success:
			return resp.Body, nil
		case remoting.NoPermission:
			return nil, nil // "The subject is not exist."
		}
		return nil, fmt.Errorf("auth lookup %d: code %d %s", code, resp.Code, resp.Remark)
	}
	return nil, errAuthFetch
}
