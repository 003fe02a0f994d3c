package adminclient

import (
	"fmt"
	"strings"
)

// UserInfo is ACL 2.0's UserInfo body.
type UserInfo struct {
	Username   *string `json:"username,omitempty"`
	Password   *string `json:"password,omitempty"`
	UserType   *string `json:"userType,omitempty"`
	UserStatus *string `json:"userStatus,omitempty"`
}

// AclInfo is ACL 2.0's AclInfo body.
type AclInfo struct {
	Subject  *string      `json:"subject,omitempty"`
	Policies []PolicyInfo `json:"policies,omitempty"`
}

// PolicyInfo is AclInfo.PolicyInfo.
type PolicyInfo struct {
	PolicyType *string           `json:"policyType,omitempty"`
	Entries    []PolicyEntryInfo `json:"entries,omitempty"`
}

// PolicyEntryInfo is AclInfo.PolicyEntryInfo.
type PolicyEntryInfo struct {
	Resource  *string  `json:"resource,omitempty"`
	Actions   []string `json:"actions,omitempty"`
	SourceIps []string `json:"sourceIps,omitempty"`
	Decision  *string  `json:"decision,omitempty"`
}

// AuthCall sends one ACL 2.0 request with v (when not nil) as its JSON body
// and decodes a non-empty answer into out (when not nil).
func (c *Client) AuthCall(addr string, code int32, ext map[string]string, v, out any) error {
	var body []byte
	if v != nil {
		var err error
		if body, err = json.Marshal(v); err != nil {
			return err
		}
	}
	resp, err := c.Call(addr, code, ext, body)
	if err != nil {
		return err
	}
	if out == nil || len(strings.TrimSpace(string(resp.Body))) == 0 || string(resp.Body) == "null" {
		return nil
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return fmt.Errorf("%s: auth answer: %w", addr, err)
	}
	return nil
}
