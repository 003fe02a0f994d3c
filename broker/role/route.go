package role

import (
	"context"
	"errors"
	"fmt"

	"github.com/rocketgo/rocketgo/remoting"
)

// ErrNoRoute: the name servers know no route of the topic.
var ErrNoRoute = errors.New("role: topic has no route")

// TopicRoute asks the name servers, in turn, for topic's route
// (GET_ROUTEINFO_BY_TOPIC) and returns the first answer's body, as the name
// server wrote it (fastjson's bare integer keys). ErrNoRoute when a name
// server answers TOPIC_NOT_EXIST.
func (s *Service) TopicRoute(ctx context.Context, topic string) ([]byte, error) {
	var last error = errors.New("role: no name server")
	for _, addr := range s.d.Config().NamesrvAddrs {
		resp, err := s.client.Invoke(ctx, addr, remoting.NewRequest(remoting.GetRouteInfoByTopic,
			map[string]string{"topic": topic}, nil))
		switch {
		case err != nil:
			last = fmt.Errorf("route of %s from %s: %w", topic, addr, err)
		case resp.Code == remoting.TopicNotExist:
			return nil, ErrNoRoute
		case resp.Code != remoting.Success:
			last = fmt.Errorf("route of %s from %s: code %d %s", topic, addr, resp.Code, resp.Remark)
		default:
			return resp.Body, nil
		}
	}
	return nil, last
}
