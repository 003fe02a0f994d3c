package config

// Secret is a key's value that must never be printed (a password, a shared
// secret): it reads as a string and prints as "***" (the start-up log, -p,
// the GET_*_CONFIG answers, where Apache shows it); FilePairs keeps its
// value, for the config file written back.
type Secret string

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "***"
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Secret) UnmarshalText(b []byte) error {
	*s = Secret(b)
	return nil
}
