package auth

// The admin codes' bodies (UserInfo, AclInfo) with Apache's JSON names;
// users.json and acls.json hold the same forms.

// UserInfo is the body of the user codes (Apache's UserInfo).
type UserInfo struct {
	Username   string `json:"username,omitempty"`
	Password   string `json:"password,omitempty"`
	UserType   string `json:"userType,omitempty"`
	UserStatus string `json:"userStatus,omitempty"`
}

// AclInfo is the body of the ACL codes (Apache's AclInfo).
type AclInfo struct {
	Subject  string       `json:"subject,omitempty"`
	Policies []PolicyInfo `json:"policies,omitempty"`
}

// PolicyInfo is AclInfo.PolicyInfo.
type PolicyInfo struct {
	PolicyType string            `json:"policyType,omitempty"`
	Entries    []PolicyEntryInfo `json:"entries,omitempty"`
}

// PolicyEntryInfo is AclInfo.PolicyEntryInfo.
type PolicyEntryInfo struct {
	Resource  string   `json:"resource,omitempty"`
	Actions   []string `json:"actions,omitempty"`
	SourceIps []string `json:"sourceIps,omitempty"`
	Decision  string   `json:"decision,omitempty"`
}

// Info is UserConverter.convertUser(User).
func (u *User) Info() UserInfo {
	return UserInfo{Username: u.Username, Password: u.Password, UserType: u.Type.String(), UserStatus: u.Status.String()}
}

// userOf is UserConverter.convertUser(UserInfo).
func userOf(i UserInfo) *User {
	return &User{Username: i.Username, Password: i.Password, Type: ParseUserType(i.UserType), Status: ParseUserStatus(i.UserStatus)}
}

// Info is AclConverter.convertAcl(Acl).
func (a *Acl) Info() AclInfo {
	out := AclInfo{Subject: SubjectKey(a.Username)}
	for _, p := range a.Policies {
		pi := PolicyInfo{PolicyType: p.Type.String()}
		for _, e := range p.Entries {
			ei := PolicyEntryInfo{Resource: e.Resource.Key(), SourceIps: e.SourceIPs, Decision: e.Decision.String()}
			for _, act := range e.Actions {
				ei.Actions = append(ei.Actions, act.String())
			}
			pi.Entries = append(pi.Entries, ei)
		}
		out.Policies = append(out.Policies, pi)
	}
	return out
}

// aclOf is AclConverter.convertAcl(AclInfo) followed by
// AuthorizationMetadataManagerImpl's validate and initAcl: the subject
// is the body's, else fallback (the header's); an error is Apache's
// AuthorizationException message (errNoSubject: Apache fails with a
// NullPointerException).
func aclOf(i AclInfo, fallback string) (*Acl, error) {
	name, ok := ParseSubject(i.Subject)
	if !ok {
		if name, ok = ParseSubject(fallback); !ok {
			return nil, errNoSubject
		}
	}
	a := &Acl{Username: name}
	for _, pi := range i.Policies {
		if len(pi.Entries) == 0 {
			continue // the converter drops it
		}
		p := &Policy{Type: ParsePolicyType(pi.PolicyType)}
		if p.Type == 0 {
			p.Type = Custom
		}
		for _, ei := range pi.Entries {
			e, err := entryOf(ei)
			if err != nil {
				return nil, err
			}
			p.Entries = append(p.Entries, e)
		}
		a.Policies = append(a.Policies, p)
	}
	if len(a.Policies) == 0 {
		return nil, refuse("The policies is empty.")
	}
	return a, nil
}

func entryOf(ei PolicyEntryInfo) (*Entry, error) {
	r, ok := ParseResource(ei.Resource)
	if !ok {
		return nil, refuse("The resource is null.")
	}
	e := &Entry{Resource: r, Decision: ParseDecision(ei.Decision)}
	for _, s := range ei.Actions {
		if a, ok := ParseAction(s); ok {
			e.Actions = append(e.Actions, a)
		}
	}
	if len(e.Actions) == 0 {
		return nil, refuse("The actions is empty.")
	}
	for _, a := range e.Actions {
		if a == ActionAny {
			return nil, refuse("The actions can not be Any.")
		}
	}
	for _, ip := range ei.SourceIps {
		if isBlank(ip) {
			return nil, refuse("The source ip is empty.")
		}
		if !validSourceIP(ip) {
			return nil, refuse("The source ip is invalid.")
		}
	}
	if len(ei.SourceIps) > 0 {
		e.SourceIPs = append([]string(nil), ei.SourceIps...)
	}
	if e.Decision == 0 {
		return nil, refuse("The decision is null or illegal.")
	}
	return e, nil
}
