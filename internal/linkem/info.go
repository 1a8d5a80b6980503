package linkem

// Info is linkem/linkem.json.
type Info struct {
	Backend   string `json:"backend"`
	Reason    string `json:"reason"`
	Zones     string `json:"zones,omitempty"`
	Jitter    string `json:"jitter,omitempty"`
	Loss      string `json:"loss,omitempty"`
	Bandwidth string `json:"bandwidth,omitempty"`
}
