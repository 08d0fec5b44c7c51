package v1

import "k8s.io/apimachinery/pkg/util/intstr"

// Probe is a check of the guest's health (KubeVirt's type). httpGet and tcpSocket reach the
// guest through the pod network at the VMI's address, as a kubelet probes a container; exec
// runs a command in the guest and guestAgentPing pings the guest agent, both through the
// guest agent.
type Probe struct {
	// Handler is the check to run: exactly one of exec, httpGet, tcpSocket and guestAgentPing.
	Handler `json:",inline" protobuf:"bytes,1,opt,name=handler"`
	// InitialDelaySeconds is how long after the guest started the first check waits.
	// +optional
	InitialDelaySeconds int32 `json:"initialDelaySeconds,omitempty" protobuf:"varint,2,opt,name=initialDelaySeconds"`
	// TimeoutSeconds is how long a check may take before it counts as failed; an exec check's
	// command keeps running in the guest. Defaults to 1; at least 1.
	// +optional
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty" protobuf:"varint,3,opt,name=timeoutSeconds"`
	// PeriodSeconds is how often the check runs. Defaults to 10; at least 1.
	// +optional
	PeriodSeconds int32 `json:"periodSeconds,omitempty" protobuf:"varint,4,opt,name=periodSeconds"`
	// SuccessThreshold is how many checks in a row must pass after a failure. Defaults to 1;
	// must be 1 for a liveness probe.
	// +optional
	SuccessThreshold int32 `json:"successThreshold,omitempty" protobuf:"varint,5,opt,name=successThreshold"`
	// FailureThreshold is how many checks in a row must fail after a success. Defaults to 3.
	// +optional
	FailureThreshold int32 `json:"failureThreshold,omitempty" protobuf:"varint,6,opt,name=failureThreshold"`
}

// Handler is the check a Probe runs; exactly one field is set.
type Handler struct {
	// Exec runs a command in the guest through the guest agent; exit code 0 is healthy.
	// +optional
	Exec *ExecAction `json:"exec,omitempty" protobuf:"bytes,1,opt,name=exec"`
	// HTTPGet sends an HTTP GET to the guest; a status from 200 to 399 is healthy.
	// +optional
	HTTPGet *HTTPGetAction `json:"httpGet,omitempty" protobuf:"bytes,2,opt,name=httpGet"`
	// TCPSocket opens a TCP connection to the guest; a connection is healthy.
	// +optional
	TCPSocket *TCPSocketAction `json:"tcpSocket,omitempty" protobuf:"bytes,3,opt,name=tcpSocket"`
	// GuestAgentPing pings the guest agent; an answer is healthy.
	// +optional
	GuestAgentPing *GuestAgentPing `json:"guestAgentPing,omitempty" protobuf:"bytes,4,opt,name=guestAgentPing"`
}

// ExecAction is a command to run (Kubernetes' type).
type ExecAction struct {
	// Command is the program and its arguments, run without a shell.
	// +optional
	// +listType=atomic
	Command []string `json:"command,omitempty" protobuf:"bytes,1,rep,name=command"`
}

// URIScheme is HTTP or HTTPS.
type URIScheme string

// HTTPGetAction is an HTTP GET to send (Kubernetes' type).
type HTTPGetAction struct {
	// Path is the path to ask for.
	// +optional
	Path string `json:"path,omitempty" protobuf:"bytes,1,opt,name=path"`
	// Port is the port's number or the name of one of the interface's ports.
	Port intstr.IntOrString `json:"port" protobuf:"bytes,2,opt,name=port"`
	// Host is the host name to connect to; defaults to the VMI's address.
	// +optional
	Host string `json:"host,omitempty" protobuf:"bytes,3,opt,name=host"`
	// Scheme is HTTP (the default) or HTTPS.
	// +optional
	Scheme URIScheme `json:"scheme,omitempty" protobuf:"bytes,4,opt,name=scheme,casttype=URIScheme"`
	// HTTPHeaders are headers to send.
	// +optional
	// +listType=atomic
	HTTPHeaders []HTTPHeader `json:"httpHeaders,omitempty" protobuf:"bytes,5,rep,name=httpHeaders"`
}

// HTTPHeader is one header of an HTTP probe.
type HTTPHeader struct {
	// Name is the header's name.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Value is the header's value.
	Value string `json:"value" protobuf:"bytes,2,opt,name=value"`
}

// TCPSocketAction is a TCP connection to open (Kubernetes' type).
type TCPSocketAction struct {
	// Port is the port's number or the name of one of the interface's ports.
	Port intstr.IntOrString `json:"port" protobuf:"bytes,1,opt,name=port"`
	// Host is the host name to connect to; defaults to the VMI's address.
	// +optional
	Host string `json:"host,omitempty" protobuf:"bytes,2,opt,name=host"`
}

// GuestAgentPing pings the guest agent.
type GuestAgentPing struct{}
