//! The scope of Kubernetes kinds: Kubernetes' own kinds, common CustomResourceDefinitions, and
//! the CustomResourceDefinitions of the repository.
//!
//! The tables of custom kinds were read from the CRDs their projects publish (OpenShift's
//! `openshift/api`, OLM's `operator-framework/api`, cert-manager, Gateway API, Istio and its Sail
//! operator, prometheus-operator, Argo CD and argocd-operator, Argo Rollouts/Workflows/Events,
//! Crossplane, external-secrets, Kyverno, CloudNativePG, Traefik, MetalLB, KEDA, trust-manager,
//! the CSI snapshotter, Cilium). Kinds served by aggregated APIs rather than CRDs (OpenShift's
//! `Repository`, `User`, `ImageStream`...) are listed as their APIs serve them.

use std::collections::HashMap;

use crate::model::Repository;
use crate::model::argocd::appproject::filepath_match;
use crate::model::{DocKind, Document};
use crate::yaml::Node;

/// Whether objects of a kind live in a namespace.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    Namespaced,
    Cluster,
}

use Scope::{Cluster as C, Namespaced as N};

/// API groups served by Kubernetes itself (not by CRDs). Their kinds are all in `BUILTIN`.
const BUILTIN_GROUPS: &[&str] = &[
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "extensions",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
];

/// Kubernetes' own kinds (current and removed API versions), as `(group, kind, scope)`.
const BUILTIN: &[(&str, &str, Scope)] = &[
    ("", "Binding", N),
    ("", "ComponentStatus", C),
    ("", "ConfigMap", N),
    ("", "Endpoints", N),
    ("", "Event", N),
    ("", "LimitRange", N),
    ("", "Namespace", C),
    ("", "Node", C),
    ("", "PersistentVolume", C),
    ("", "PersistentVolumeClaim", N),
    ("", "Pod", N),
    ("", "PodTemplate", N),
    ("", "ReplicationController", N),
    ("", "ResourceQuota", N),
    ("", "Secret", N),
    ("", "Service", N),
    ("", "ServiceAccount", N),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy", C),
    (
        "admissionregistration.k8s.io",
        "MutatingAdmissionPolicyBinding",
        C,
    ),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        C,
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicy",
        C,
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
        C,
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        C,
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition", C),
    ("apiregistration.k8s.io", "APIService", C),
    ("apps", "ControllerRevision", N),
    ("apps", "DaemonSet", N),
    ("apps", "Deployment", N),
    ("apps", "ReplicaSet", N),
    ("apps", "StatefulSet", N),
    ("authentication.k8s.io", "SelfSubjectReview", C),
    ("authentication.k8s.io", "TokenReview", C),
    ("authorization.k8s.io", "LocalSubjectAccessReview", N),
    ("authorization.k8s.io", "SelfSubjectAccessReview", C),
    ("authorization.k8s.io", "SelfSubjectRulesReview", C),
    ("authorization.k8s.io", "SubjectAccessReview", C),
    ("autoscaling", "HorizontalPodAutoscaler", N),
    ("batch", "CronJob", N),
    ("batch", "Job", N),
    ("certificates.k8s.io", "CertificateSigningRequest", C),
    ("certificates.k8s.io", "ClusterTrustBundle", C),
    ("coordination.k8s.io", "Lease", N),
    ("coordination.k8s.io", "LeaseCandidate", N),
    ("discovery.k8s.io", "EndpointSlice", N),
    ("events.k8s.io", "Event", N),
    ("extensions", "DaemonSet", N),
    ("extensions", "Deployment", N),
    ("extensions", "Ingress", N),
    ("extensions", "NetworkPolicy", N),
    ("extensions", "PodSecurityPolicy", C),
    ("extensions", "ReplicaSet", N),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema", C),
    (
        "flowcontrol.apiserver.k8s.io",
        "PriorityLevelConfiguration",
        C,
    ),
    ("internal.apiserver.k8s.io", "StorageVersion", C),
    ("networking.k8s.io", "IPAddress", C),
    ("networking.k8s.io", "Ingress", N),
    ("networking.k8s.io", "IngressClass", C),
    ("networking.k8s.io", "NetworkPolicy", N),
    ("networking.k8s.io", "ServiceCIDR", C),
    ("node.k8s.io", "RuntimeClass", C),
    ("policy", "PodDisruptionBudget", N),
    ("policy", "PodSecurityPolicy", C),
    ("rbac.authorization.k8s.io", "ClusterRole", C),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding", C),
    ("rbac.authorization.k8s.io", "Role", N),
    ("rbac.authorization.k8s.io", "RoleBinding", N),
    ("resource.k8s.io", "DeviceClass", C),
    ("resource.k8s.io", "DeviceTaintRule", C),
    ("resource.k8s.io", "ResourceClaim", N),
    ("resource.k8s.io", "ResourceClaimTemplate", N),
    ("resource.k8s.io", "ResourceSlice", C),
    ("scheduling.k8s.io", "PriorityClass", C),
    ("storage.k8s.io", "CSIDriver", C),
    ("storage.k8s.io", "CSINode", C),
    ("storage.k8s.io", "CSIStorageCapacity", N),
    ("storage.k8s.io", "StorageClass", C),
    ("storage.k8s.io", "VolumeAttachment", C),
    ("storage.k8s.io", "VolumeAttributesClass", C),
    ("storagemigration.k8s.io", "StorageVersionMigration", C),
];

/// Kinds of common operators and platforms, as `(group, kind, scope)`, sorted by group.
const KNOWN_CRDS: &[(&str, &str, Scope)] = &[
    // cert-manager and trust-manager.
    ("acme.cert-manager.io", "Challenge", N),
    ("acme.cert-manager.io", "Order", N),
    ("cert-manager.io", "Certificate", N),
    ("cert-manager.io", "CertificateRequest", N),
    ("cert-manager.io", "ClusterIssuer", C),
    ("cert-manager.io", "Issuer", N),
    ("trust.cert-manager.io", "Bundle", C),
    ("trust-manager.io", "ClusterBundle", C),
    // Crossplane.
    (
        "apiextensions.crossplane.io",
        "CompositeResourceDefinition",
        C,
    ),
    ("apiextensions.crossplane.io", "Composition", C),
    ("apiextensions.crossplane.io", "CompositionRevision", C),
    ("apiextensions.crossplane.io", "EnvironmentConfig", C),
    (
        "apiextensions.crossplane.io",
        "ManagedResourceActivationPolicy",
        C,
    ),
    (
        "apiextensions.crossplane.io",
        "ManagedResourceDefinition",
        C,
    ),
    ("apiextensions.crossplane.io", "Usage", C),
    ("ops.crossplane.io", "CronOperation", C),
    ("ops.crossplane.io", "Operation", C),
    ("ops.crossplane.io", "WatchOperation", C),
    ("pkg.crossplane.io", "Configuration", C),
    ("pkg.crossplane.io", "ConfigurationRevision", C),
    ("pkg.crossplane.io", "ControllerConfig", C),
    ("pkg.crossplane.io", "DeploymentRuntimeConfig", C),
    ("pkg.crossplane.io", "Function", C),
    ("pkg.crossplane.io", "FunctionRevision", C),
    ("pkg.crossplane.io", "ImageConfig", C),
    ("pkg.crossplane.io", "Lock", C),
    ("pkg.crossplane.io", "Provider", C),
    ("pkg.crossplane.io", "ProviderRevision", C),
    ("protection.crossplane.io", "ClusterUsage", C),
    ("protection.crossplane.io", "Usage", N),
    // Argo CD, argocd-operator (OpenShift GitOps), Rollouts, Workflows, Events.
    ("argoproj.io", "AnalysisRun", N),
    ("argoproj.io", "AnalysisTemplate", N),
    ("argoproj.io", "AppProject", N),
    ("argoproj.io", "Application", N),
    ("argoproj.io", "ApplicationSet", N),
    ("argoproj.io", "ArgoCD", N),
    ("argoproj.io", "ArgoCDExport", N),
    ("argoproj.io", "ClusterAnalysisTemplate", C),
    ("argoproj.io", "ClusterWorkflowTemplate", C),
    ("argoproj.io", "CronWorkflow", N),
    ("argoproj.io", "EventBus", N),
    ("argoproj.io", "EventSource", N),
    ("argoproj.io", "Experiment", N),
    ("argoproj.io", "NamespaceManagement", N),
    ("argoproj.io", "NotificationsConfiguration", N),
    ("argoproj.io", "Rollout", N),
    ("argoproj.io", "Sensor", N),
    ("argoproj.io", "Workflow", N),
    ("argoproj.io", "WorkflowEventBinding", N),
    ("argoproj.io", "WorkflowTemplate", N),
    // Cilium.
    ("cilium.io", "CiliumBGPAdvertisement", C),
    ("cilium.io", "CiliumBGPClusterConfig", C),
    ("cilium.io", "CiliumBGPNodeConfigOverride", C),
    ("cilium.io", "CiliumBGPPeerConfig", C),
    ("cilium.io", "CiliumBGPPeeringPolicy", C),
    ("cilium.io", "CiliumCIDRGroup", C),
    ("cilium.io", "CiliumClusterwideEnvoyConfig", C),
    ("cilium.io", "CiliumClusterwideNetworkPolicy", C),
    ("cilium.io", "CiliumEgressGatewayPolicy", C),
    ("cilium.io", "CiliumEndpoint", N),
    ("cilium.io", "CiliumEnvoyConfig", N),
    ("cilium.io", "CiliumIdentity", C),
    ("cilium.io", "CiliumL2AnnouncementPolicy", C),
    ("cilium.io", "CiliumLoadBalancerIPPool", C),
    ("cilium.io", "CiliumLocalRedirectPolicy", N),
    ("cilium.io", "CiliumNetworkPolicy", N),
    ("cilium.io", "CiliumNode", C),
    ("cilium.io", "CiliumNodeConfig", N),
    ("cilium.io", "CiliumPodIPPool", C),
    // external-secrets.
    ("external-secrets.io", "ClusterExternalSecret", C),
    ("external-secrets.io", "ClusterPushSecret", C),
    ("external-secrets.io", "ClusterSecretStore", C),
    ("external-secrets.io", "ExternalSecret", N),
    ("external-secrets.io", "PushSecret", N),
    ("external-secrets.io", "SecretStore", N),
    ("generators.external-secrets.io", "ClusterGenerator", C),
    // Gateway API.
    ("gateway.networking.k8s.io", "BackendTLSPolicy", N),
    ("gateway.networking.k8s.io", "GRPCRoute", N),
    ("gateway.networking.k8s.io", "Gateway", N),
    ("gateway.networking.k8s.io", "GatewayClass", C),
    ("gateway.networking.k8s.io", "HTTPRoute", N),
    ("gateway.networking.k8s.io", "ListenerSet", N),
    ("gateway.networking.k8s.io", "ReferenceGrant", N),
    ("gateway.networking.k8s.io", "TCPRoute", N),
    ("gateway.networking.k8s.io", "TLSRoute", N),
    ("gateway.networking.k8s.io", "UDPRoute", N),
    // Istio and its Sail operator.
    ("extensions.istio.io", "WasmPlugin", N),
    ("install.istio.io", "IstioOperator", N),
    ("networking.istio.io", "DestinationRule", N),
    ("networking.istio.io", "EnvoyFilter", N),
    ("networking.istio.io", "Gateway", N),
    ("networking.istio.io", "ProxyConfig", N),
    ("networking.istio.io", "ServiceEntry", N),
    ("networking.istio.io", "Sidecar", N),
    ("networking.istio.io", "VirtualService", N),
    ("networking.istio.io", "WorkloadEntry", N),
    ("networking.istio.io", "WorkloadGroup", N),
    ("sailoperator.io", "Istio", C),
    ("sailoperator.io", "IstioCNI", C),
    ("sailoperator.io", "IstioRevision", C),
    ("sailoperator.io", "IstioRevisionTag", C),
    ("sailoperator.io", "ZTunnel", C),
    ("security.istio.io", "AuthorizationPolicy", N),
    ("security.istio.io", "PeerAuthentication", N),
    ("security.istio.io", "RequestAuthentication", N),
    ("telemetry.istio.io", "Telemetry", N),
    // KEDA.
    ("keda.sh", "ClusterTriggerAuthentication", C),
    ("keda.sh", "ScaledJob", N),
    ("keda.sh", "ScaledObject", N),
    ("keda.sh", "TriggerAuthentication", N),
    // Kyverno and policy reports.
    ("kyverno.io", "CleanupPolicy", N),
    ("kyverno.io", "ClusterCleanupPolicy", C),
    ("kyverno.io", "ClusterPolicy", C),
    ("kyverno.io", "GlobalContextEntry", C),
    ("kyverno.io", "Policy", N),
    ("kyverno.io", "PolicyException", N),
    ("kyverno.io", "UpdateRequest", N),
    ("policies.kyverno.io", "DeletingPolicy", C),
    ("policies.kyverno.io", "GeneratingPolicy", C),
    ("policies.kyverno.io", "ImageValidatingPolicy", C),
    ("policies.kyverno.io", "MutatingPolicy", C),
    ("policies.kyverno.io", "NamespacedDeletingPolicy", N),
    ("policies.kyverno.io", "NamespacedGeneratingPolicy", N),
    ("policies.kyverno.io", "NamespacedImageValidatingPolicy", N),
    ("policies.kyverno.io", "NamespacedMutatingPolicy", N),
    ("policies.kyverno.io", "NamespacedValidatingPolicy", N),
    ("policies.kyverno.io", "PolicyException", N),
    ("policies.kyverno.io", "ValidatingPolicy", C),
    ("wgpolicyk8s.io", "ClusterPolicyReport", C),
    ("wgpolicyk8s.io", "PolicyReport", N),
    // MetalLB.
    ("metallb.io", "BFDProfile", N),
    ("metallb.io", "BGPAdvertisement", N),
    ("metallb.io", "BGPPeer", N),
    ("metallb.io", "Community", N),
    ("metallb.io", "IPAddressPool", N),
    ("metallb.io", "L2Advertisement", N),
    ("metallb.io", "MetalLB", N),
    // Prometheus operator.
    ("monitoring.coreos.com", "Alertmanager", N),
    ("monitoring.coreos.com", "AlertmanagerConfig", N),
    ("monitoring.coreos.com", "PodMonitor", N),
    ("monitoring.coreos.com", "Probe", N),
    ("monitoring.coreos.com", "Prometheus", N),
    ("monitoring.coreos.com", "PrometheusAgent", N),
    ("monitoring.coreos.com", "PrometheusRule", N),
    ("monitoring.coreos.com", "ScrapeConfig", N),
    ("monitoring.coreos.com", "ServiceMonitor", N),
    ("monitoring.coreos.com", "ThanosRuler", N),
    // OLM.
    ("operators.coreos.com", "CatalogSource", N),
    ("operators.coreos.com", "ClusterServiceVersion", N),
    ("operators.coreos.com", "InstallPlan", N),
    ("operators.coreos.com", "OLMConfig", C),
    ("operators.coreos.com", "Operator", C),
    ("operators.coreos.com", "OperatorCondition", N),
    ("operators.coreos.com", "OperatorGroup", N),
    ("operators.coreos.com", "Subscription", N),
    // OpenShift.
    ("apps.openshift.io", "DeploymentConfig", N),
    ("authorization.openshift.io", "RoleBindingRestriction", N),
    ("autoscaling.openshift.io", "ClusterAutoscaler", C),
    ("autoscaling.openshift.io", "MachineAutoscaler", N),
    ("build.openshift.io", "Build", N),
    ("build.openshift.io", "BuildConfig", N),
    ("config.openshift.io", "APIServer", C),
    ("config.openshift.io", "Authentication", C),
    ("config.openshift.io", "Build", C),
    ("config.openshift.io", "ClusterImagePolicy", C),
    ("config.openshift.io", "ClusterOperator", C),
    ("config.openshift.io", "ClusterVersion", C),
    ("config.openshift.io", "Console", C),
    ("config.openshift.io", "DNS", C),
    ("config.openshift.io", "FeatureGate", C),
    ("config.openshift.io", "Image", C),
    ("config.openshift.io", "ImageContentPolicy", C),
    ("config.openshift.io", "ImageDigestMirrorSet", C),
    ("config.openshift.io", "ImagePolicy", N),
    ("config.openshift.io", "ImageTagMirrorSet", C),
    ("config.openshift.io", "Infrastructure", C),
    ("config.openshift.io", "Ingress", C),
    ("config.openshift.io", "Network", C),
    ("config.openshift.io", "Node", C),
    ("config.openshift.io", "OAuth", C),
    ("config.openshift.io", "OperatorHub", C),
    ("config.openshift.io", "Repository", C),
    ("config.openshift.io", "Proxy", C),
    ("config.openshift.io", "Scheduler", C),
    ("console.openshift.io", "ConsoleCLIDownload", C),
    ("console.openshift.io", "ConsoleExternalLogLink", C),
    ("console.openshift.io", "ConsoleLink", C),
    ("console.openshift.io", "ConsoleNotification", C),
    ("console.openshift.io", "ConsolePlugin", C),
    ("console.openshift.io", "ConsoleQuickStart", C),
    ("console.openshift.io", "ConsoleSample", C),
    ("console.openshift.io", "ConsoleYAMLSample", C),
    ("helm.openshift.io", "HelmChartRepository", C),
    ("helm.openshift.io", "ProjectHelmChartRepository", N),
    ("image.openshift.io", "Image", C),
    ("image.openshift.io", "ImageStream", N),
    ("image.openshift.io", "ImageStreamTag", N),
    ("imageregistry.operator.openshift.io", "Config", C),
    ("imageregistry.operator.openshift.io", "ImagePruner", C),
    ("machine.openshift.io", "ControlPlaneMachineSet", N),
    ("machine.openshift.io", "Machine", N),
    ("machine.openshift.io", "MachineHealthCheck", N),
    ("machine.openshift.io", "MachineSet", N),
    (
        "machineconfiguration.openshift.io",
        "ContainerRuntimeConfig",
        C,
    ),
    ("machineconfiguration.openshift.io", "ControllerConfig", C),
    ("machineconfiguration.openshift.io", "KubeletConfig", C),
    ("machineconfiguration.openshift.io", "MachineConfig", C),
    ("machineconfiguration.openshift.io", "MachineConfigNode", C),
    ("machineconfiguration.openshift.io", "MachineConfigPool", C),
    ("machineconfiguration.openshift.io", "MachineOSBuild", C),
    ("machineconfiguration.openshift.io", "MachineOSConfig", C),
    ("machineconfiguration.openshift.io", "PinnedImageSet", C),
    ("monitoring.openshift.io", "AlertRelabelConfig", N),
    ("monitoring.openshift.io", "AlertingRule", N),
    ("oauth.openshift.io", "OAuthClient", C),
    ("operator.openshift.io", "Authentication", C),
    ("operator.openshift.io", "CSISnapshotController", C),
    ("operator.openshift.io", "CloudCredential", C),
    ("operator.openshift.io", "ClusterCSIDriver", C),
    ("operator.openshift.io", "Config", C),
    ("operator.openshift.io", "Console", C),
    ("operator.openshift.io", "DNS", C),
    ("operator.openshift.io", "Etcd", C),
    ("operator.openshift.io", "ImageContentSourcePolicy", C),
    ("operator.openshift.io", "IngressController", N),
    ("operator.openshift.io", "KubeAPIServer", C),
    ("operator.openshift.io", "KubeControllerManager", C),
    ("operator.openshift.io", "KubeScheduler", C),
    ("operator.openshift.io", "Network", C),
    ("operator.openshift.io", "OpenShiftAPIServer", C),
    ("operator.openshift.io", "OpenShiftControllerManager", C),
    ("operator.openshift.io", "ServiceCA", C),
    ("operator.openshift.io", "Storage", C),
    ("project.openshift.io", "Repository", C),
    ("project.openshift.io", "ProjectRequest", C),
    ("quota.openshift.io", "ClusterResourceQuota", C),
    ("route.openshift.io", "Route", N),
    ("samples.operator.openshift.io", "Config", C),
    ("security.openshift.io", "SecurityContextConstraints", C),
    ("template.openshift.io", "Template", N),
    ("tuned.openshift.io", "Profile", N),
    ("tuned.openshift.io", "Tuned", N),
    ("user.openshift.io", "Group", C),
    ("user.openshift.io", "Identity", C),
    ("user.openshift.io", "User", C),
    // CloudNativePG.
    ("postgresql.cnpg.io", "Backup", N),
    ("postgresql.cnpg.io", "Cluster", N),
    ("postgresql.cnpg.io", "ClusterImageCatalog", C),
    ("postgresql.cnpg.io", "Database", N),
    ("postgresql.cnpg.io", "ImageCatalog", N),
    ("postgresql.cnpg.io", "Pooler", N),
    ("postgresql.cnpg.io", "Publication", N),
    ("postgresql.cnpg.io", "ScheduledBackup", N),
    ("postgresql.cnpg.io", "Subscription", N),
    // CSI snapshots.
    ("snapshot.storage.k8s.io", "VolumeSnapshot", N),
    ("snapshot.storage.k8s.io", "VolumeSnapshotClass", C),
    ("snapshot.storage.k8s.io", "VolumeSnapshotContent", C),
    // Traefik (the older `traefik.containo.us` group has the same kinds).
    ("traefik.containo.us", "IngressRoute", N),
    ("traefik.containo.us", "IngressRouteTCP", N),
    ("traefik.containo.us", "IngressRouteUDP", N),
    ("traefik.containo.us", "Middleware", N),
    ("traefik.containo.us", "MiddlewareTCP", N),
    ("traefik.containo.us", "ServersTransport", N),
    ("traefik.containo.us", "TLSOption", N),
    ("traefik.containo.us", "TLSStore", N),
    ("traefik.containo.us", "TraefikService", N),
    ("traefik.io", "IngressRoute", N),
    ("traefik.io", "IngressRouteTCP", N),
    ("traefik.io", "IngressRouteUDP", N),
    ("traefik.io", "Middleware", N),
    ("traefik.io", "MiddlewareTCP", N),
    ("traefik.io", "ServersTransport", N),
    ("traefik.io", "ServersTransportTCP", N),
    ("traefik.io", "TLSOption", N),
    ("traefik.io", "TLSStore", N),
    ("traefik.io", "TraefikService", N),
];

/// True for an API group Kubernetes serves itself (`""`, `apps`, `rbac.authorization.k8s.io`...).
#[must_use]
pub fn is_builtin_group(group: &str) -> bool {
    BUILTIN_GROUPS.contains(&group)
}

/// The group of an `apiVersion` (`apps/v1` → `apps`, `v1` → the core group `""`).
#[must_use]
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// The package an OLM `Subscription` (`operators.coreos.com`) installs: its `spec.name` node.
#[must_use]
pub fn olm_subscription_package(doc: &Document) -> Option<&Node> {
    if doc.k8s_kind() != Some("Subscription")
        || group_of(doc.api_version()?) != "operators.coreos.com"
    {
        return None;
    }
    doc.root
        .path(&["spec", "name"])
        .filter(|n| n.as_str().is_some())
}

/// Kinds that only cluster infrastructure applies, by API group: admission webhooks, aggregated
/// APIs and OLM catalogs extend or police the API server for everyone (CRDs and OLM
/// Subscriptions are told apart by their callers, with what they name).
#[must_use]
pub fn infrastructure_kind(group: &str, kind: &str) -> Option<&'static str> {
    match (group, kind) {
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
            Some("the admission webhook")
        }
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
            Some("the admission webhook")
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") => {
            Some("the admission policy")
        }
        ("apiregistration.k8s.io", "APIService") => Some("the aggregated API"),
        ("operators.coreos.com", "CatalogSource") => Some("the OLM CatalogSource"),
        _ => None,
    }
}

/// The resource name of a kind, as Kubernetes' default pluralisation makes it (`Namespace` →
/// `namespaces`, `IngressClass` → `ingressclasses`, `NetworkPolicy` → `networkpolicies`).
#[must_use]
pub fn plural(kind: &str) -> String {
    let lower = kind.to_lowercase();
    if lower.ends_with('s')
        || lower.ends_with('x')
        || lower.ends_with("ch")
        || lower.ends_with("sh")
    {
        format!("{lower}es")
    } else if let Some(stem) = lower.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    }
}

/// What the repository's CustomResourceDefinitions declare, over the tables above.
#[derive(Debug, Default)]
pub struct KindScopes {
    /// `None`: the repository declares the kind more than once with different scopes.
    repo: HashMap<(String, String), Option<Scope>>,
}

impl KindScopes {
    /// Reads every `CustomResourceDefinition` of the repository (`spec.group`,
    /// `spec.names.kind`, `spec.scope`).
    #[must_use]
    pub fn of(documents: &Repository) -> KindScopes {
        let mut repo: HashMap<(String, String), Option<Scope>> = HashMap::new();
        for d in documents.docs_of(DocKind::K8sObject) {
            if d.k8s_kind() != Some("CustomResourceDefinition")
                || !d
                    .api_version()
                    .is_some_and(|v| v.starts_with("apiextensions.k8s.io/"))
            {
                continue;
            }
            let spec = |path: &[&str]| {
                d.root
                    .get("spec")
                    .and_then(|s| s.path(path))
                    .and_then(Node::as_str)
            };
            let (Some(group), Some(kind), Some(scope)) =
                (spec(&["group"]), spec(&["names", "kind"]), spec(&["scope"]))
            else {
                continue;
            };
            let scope = match scope {
                "Namespaced" => N,
                "Cluster" => C,
                _ => continue,
            };
            repo.entry((group.to_string(), kind.to_string()))
                .and_modify(|s| {
                    if *s != Some(scope) {
                        *s = None;
                    }
                })
                .or_insert(Some(scope));
        }
        KindScopes { repo }
    }

    /// The scope of `group`/`kind`: the repository's CRD first, then the tables; `None` when
    /// unknown.
    #[must_use]
    pub fn scope(&self, group: &str, kind: &str) -> Option<Scope> {
        if let Some(s) = self.repo.get(&(group.to_string(), kind.to_string())) {
            return *s;
        }
        BUILTIN
            .iter()
            .chain(KNOWN_CRDS)
            .find(|(g, k, _)| *g == group && *k == kind)
            .map(|(_, _, s)| *s)
    }

    /// Whether `resource` of `group` (as an RBAC rule writes them: `namespaces`, `*`) names a
    /// cluster-scoped kind; `*` matches any group or resource.
    #[must_use]
    pub fn resource_is_cluster_scoped(&self, group: &str, resource: &str) -> bool {
        self.cluster_kinds().any(|(g, k)| {
            (group == "*" || group == g) && (resource == "*" || resource == plural(k))
        })
    }

    /// Every known cluster-scoped `(group, kind)`.
    fn cluster_kinds(&self) -> impl Iterator<Item = (&str, &str)> {
        let tables = BUILTIN
            .iter()
            .chain(KNOWN_CRDS)
            .filter(|(g, k, s)| {
                *s == C
                    && !self
                        .repo
                        .contains_key(&((*g).to_string(), (*k).to_string()))
            })
            .map(|(g, k, _)| (*g, *k));
        let repo = self
            .repo
            .iter()
            .filter(|(_, s)| **s == Some(C))
            .map(|((g, k), _)| (g.as_str(), k.as_str()));
        tables.chain(repo)
    }

    /// What an AppProject `clusterResourceWhitelist` entry (`group` and `kind`, globs as Argo
    /// CD matches them) can let Applications create. Argo CD checks this list only for
    /// cluster-scoped objects, so an entry that can only match namespaced kinds grants nothing.
    /// `allowed(group, kind)` says which cluster-scoped kinds are acceptable anyway.
    #[must_use]
    pub fn whitelist_reach(
        &self,
        group: &str,
        kind: &str,
        allowed: impl Fn(&str, &str) -> bool,
    ) -> Reach {
        let is_glob = |s: &str| s.contains(['*', '?', '[', '\\']);
        if !is_glob(group) && !is_glob(kind) {
            return match self.scope(group, kind) {
                Some(N) => Reach::Nothing,
                Some(C) if allowed(group, kind) => Reach::Nothing,
                Some(C) => Reach::ClusterScoped(None),
                // Kinds are CamelCase: `configmaps` (a resource name) matches no object; and
                // every kind of Kubernetes' own groups is known (`RoleBinding` is not in `""`).
                None if kind.chars().next().is_none_or(char::is_lowercase)
                    || is_builtin_group(group) =>
                {
                    Reach::Nothing
                }
                None => Reach::Unknown,
            };
        }
        let mut cluster: Vec<(&str, &str)> = self
            .cluster_kinds()
            .filter(|(g, k)| filepath_match(group, g) && filepath_match(kind, k) && !allowed(g, k))
            .collect();
        cluster.sort_unstable();
        if let Some((g, k)) = cluster.first() {
            return Reach::ClusterScoped(Some(((*g).to_string(), (*k).to_string())));
        }
        // Every kind of Kubernetes' own groups is known: a glob within them reaches only what
        // the tables say. Any other group may hold kinds we do not know.
        if !is_glob(group) && is_builtin_group(group) {
            Reach::Nothing
        } else {
            Reach::Unknown
        }
    }
}

/// What a whitelist entry can reach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Only namespaced kinds, allowed cluster-scoped ones, or nothing at all.
    Nothing,
    /// A cluster-scoped kind that is not allowed; for a glob, the first such `(group, kind)`.
    ClusterScoped(Option<(String, String)>),
    /// Kinds whose scope is not known.
    Unknown,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str, _: &str) -> bool {
        false
    }

    #[test]
    fn tables_are_sorted_without_duplicates() {
        for table in [BUILTIN, KNOWN_CRDS] {
            let mut seen = std::collections::HashSet::new();
            for (g, k, _) in table {
                assert!(seen.insert((g, k)), "{g}/{k} listed twice");
            }
        }
        let mut sorted = BUILTIN.to_vec();
        sorted.sort_by_key(|(g, k, _)| (*g, *k));
        assert_eq!(sorted, BUILTIN);
        for (g, _, _) in BUILTIN {
            assert!(is_builtin_group(g), "{g} is not in BUILTIN_GROUPS");
        }
        for (g, k, _) in KNOWN_CRDS {
            assert!(!is_builtin_group(g), "{g}/{k}: a built-in group");
        }
    }

    #[test]
    fn scopes_of_tables() {
        let s = KindScopes::default();
        assert_eq!(s.scope("", "Namespace"), Some(C));
        assert_eq!(s.scope("apps", "Deployment"), Some(N));
        assert_eq!(s.scope("machine.openshift.io", "MachineSet"), Some(N));
        assert_eq!(s.scope("tuned.openshift.io", "Tuned"), Some(N));
        assert_eq!(
            s.scope("machineconfiguration.openshift.io", "MachineConfigPool"),
            Some(C)
        );
        // The group matters: OpenShift's cluster `Ingress` configuration is not an Ingress.
        assert_eq!(s.scope("config.openshift.io", "Ingress"), Some(C));
        assert_eq!(s.scope("networking.k8s.io", "Ingress"), Some(N));
        assert_eq!(s.scope("example.com", "Widget"), None);
    }

    #[test]
    fn whitelist_reach_of_entries() {
        let s = KindScopes::default();
        assert_eq!(
            s.whitelist_reach("machine.openshift.io", "MachineSet", none),
            Reach::Nothing
        );
        assert_eq!(
            s.whitelist_reach("rbac.authorization.k8s.io", "ClusterRole", none),
            Reach::ClusterScoped(None)
        );
        assert_eq!(s.whitelist_reach("", "configmaps", none), Reach::Nothing);
        // The core group has no RoleBinding: the entry matches nothing.
        assert_eq!(s.whitelist_reach("", "RoleBinding", none), Reach::Nothing);
        assert_eq!(
            s.whitelist_reach("example.com", "Widget", none),
            Reach::Unknown
        );
        // Globs: within built-in groups every kind is known.
        assert_eq!(s.whitelist_reach("apps", "*", none), Reach::Nothing);
        assert_eq!(
            s.whitelist_reach("rbac.authorization.k8s.io", "*", none),
            Reach::ClusterScoped(Some((
                "rbac.authorization.k8s.io".into(),
                "ClusterRole".into()
            )))
        );
        assert_eq!(
            s.whitelist_reach("", "*", |g, k| g.is_empty() && k == "Namespace"),
            Reach::ClusterScoped(Some(("".into(), "ComponentStatus".into())))
        );
        assert_eq!(
            s.whitelist_reach("monitoring.coreos.com", "*", none),
            Reach::Unknown
        );
        assert!(matches!(
            s.whitelist_reach("*", "*", none),
            Reach::ClusterScoped(Some(_))
        ));
    }
}
