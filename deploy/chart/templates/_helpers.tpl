{{/* The labels of every object of the dashboard (the kustomize tree's `labels`, selectors included). */}}
{{- define "ome-compat.labels" -}}
app.kubernetes.io/name: ome-compat
app.kubernetes.io/part-of: ome-compat
{{- end }}

{{/* The image; global.imageRegistry (a mirror) replaces the registry part of image.repository:
its first segment when that names a host (a dot, a colon, or localhost), as Docker reads it. */}}
{{- define "ome-compat.image" -}}
{{- $repository := .Values.image.repository }}
{{- with .Values.global.imageRegistry }}
{{- $repository = printf "%s/%s" (trimSuffix "/" .) (regexReplaceAll "^([^/]*[.:][^/]*|localhost)/" $repository "") }}
{{- end }}
{{- $repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* What differs between the six processes besides their values: the command, the init
container (beat's migrates and registers the clusters, the others wait for the schema), and
the web server's port, probes and scrape annotations; `init.policies`: the init container that
loads the policy files of values.policies; `recreate`: exactly one pod, never two
at once (beat). `values` names the process's values. */}}
{{- define "ome-compat.processes" -}}
wait: &wait
  name: wait-for-migrations
  command: ["sh", "-c", "until python manage.py migrate --check; do echo waiting for the migrate init container of ome-compat-beat; sleep 3; done"]
  resources: {requests: {cpu: 50m, memory: 128Mi}, limits: {memory: 256Mi}}
  kubeconfigs: true
web:
  values: web
  command: ["gunicorn", "ome_dashboard.wsgi", "--bind", "0.0.0.0:8000", "--access-logfile", "-", "--no-control-socket"]
  init: {<<: *wait, kubeconfigs: false}
  http: true
  podAnnotations: {prometheus.io/scrape: "true", prometheus.io/port: "8000", prometheus.io/path: /metrics}
worker:
  values: worker
  command: ["celery", "-A", "ome_dashboard", "worker", "--loglevel=INFO", "--queues=celery", "--concurrency=$(WORKER_CONCURRENCY)", "--without-gossip", "--without-mingle"]
  concurrency: WORKER_CONCURRENCY
  init: *wait
  grace: 120
control-worker:
  values: controlWorker
  command: ["celery", "-A", "ome_dashboard", "worker", "--loglevel=INFO", "--queues=control", "--pool=threads", "--concurrency=4", "--without-gossip", "--without-mingle"]
  init: *wait
  grace: 120
matrix-worker:
  values: matrixWorker
  command: ["celery", "-A", "ome_dashboard", "worker", "--loglevel=INFO", "--queues=matrix", "--concurrency=$(MATRIX_CONCURRENCY)", "--without-gossip", "--without-mingle"]
  concurrency: MATRIX_CONCURRENCY
  init: *wait
  grace: 120
watch-worker:
  values: watchWorker
  command: ["celery", "-A", "ome_dashboard", "worker", "--loglevel=INFO", "--queues=watch", "--pool=threads", "--concurrency=$(WATCH_CONCURRENCY)", "--without-gossip", "--without-mingle"]
  concurrency: WATCH_CONCURRENCY
  init: *wait
  grace: 30
beat:
  values: beat
  command: ["celery", "-A", "ome_dashboard", "beat", "--loglevel=INFO", "--schedule", "/tmp/celerybeat-schedule"]
  init:
    name: migrate
    command: ["sh", "-c", "python manage.py migrate --noinput && python manage.py register_clusters --sync && python manage.py load_policies"]
    resources: {requests: {cpu: 50m, memory: 128Mi}, limits: {memory: 1Gi}}
    kubeconfigs: true
    policies: true
  grace: 30
  recreate: true
{{- end }}

{{- define "ome-compat.containerSecurity" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end }}

{{- define "ome-compat.envFrom" -}}
- configMapRef:
    name: ome-compat-config
- secretRef:
    name: {{ .Values.existingSecret }}
{{- end }}

{{- define "ome-compat.kubeconfigMount" -}}
- name: kubeconfigs
  mountPath: {{ .Values.config.OME_KUBECONFIG_DIR }}
  readOnly: true
{{- end }}

{{/* The ClusterRole's rules: read the five OME kinds, patch models, read the CRD that tells OME's version. */}}
{{- define "ome-compat.clusterRoleRules" -}}
- apiGroups: ["ome.io"]
  resources: ["clusterbasemodels", "basemodels", "clusterservingruntimes", "servingruntimes", "inferenceservices"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["ome.io"]
  resources: ["basemodels", "clusterbasemodels"]
  verbs: ["patch"]
- apiGroups: ["apiextensions.k8s.io"]
  resources: ["customresourcedefinitions"]
  resourceNames: ["clusterbasemodels.ome.io"]
  verbs: ["get"]
{{- /* The findings written as PolicyReports (reports/, docs/reports.md), only ours changed. */}}
- apiGroups: ["wgpolicyk8s.io"]
  resources: ["policyreports", "clusterpolicyreports"]
  verbs: ["list", "create", "update", "delete"]
{{- end }}

{{/* The ConfigMap of RuntimePolicy files beat's init container loads: the chart's (policies.files) or the user's (policies.configMap); empty for none. */}}
{{- define "ome-compat.policiesConfigMap" -}}
{{- if .Values.policies.files }}ome-compat-policies{{ else }}{{ .Values.policies.configMap }}{{ end }}
{{- end }}
