//! The container images a CI job builds and pushes: `docker`/`podman`/`nerdctl`/`buildah`
//! `build` and `push`, kaniko's `executor --destination`, `crane`, `skopeo copy`, `ko`, and
//! GitHub's `docker/build-push-action`. What a job pushes is read as text, its variables
//! expanded where the file defines them.

use std::collections::BTreeMap;

use super::shell::{self, commands};
use super::{GithubJob, GitlabJob, variable_value};
use crate::yaml::Node;

/// Whether a job pushes one of the images.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pushes {
    /// It pushes this one.
    Yes(String),
    /// It pushes an image whose name the repository does not say (`$CI_REGISTRY_IMAGE`).
    Maybe,
    No,
}

/// The words of the image-pushing commands of a script, variables expanded (unknown ones kept
/// as `${NAME}`).
fn pushed_refs(script: &str, vars: &dyn Fn(&str) -> Option<String>, out: &mut Vec<String>) {
    for cmd in commands(script) {
        let words: Vec<&str> = cmd.words.iter().map(|w| w.text.as_str()).collect();
        let Some(first) = words.first() else {
            continue;
        };
        let tool = first.rsplit('/').next().unwrap_or(first);
        let has = |w: &str| {
            words
                .iter()
                .any(|x| *x == w || x.starts_with(&format!("{w}=")))
        };
        let pushes = match tool {
            "docker" | "podman" | "nerdctl" => {
                has("push") || ((has("build") || has("buildx")) && has("--push"))
            }
            "buildah" => has("push"),
            "executor" => has("--destination") || has("-d"),
            "crane" => has("push") || has("copy") || has("cp"),
            "skopeo" => has("copy"),
            "ko" => has("build") || has("publish") || has("apply") || has("resolve"),
            _ => false,
        };
        if !pushes {
            continue;
        }
        out.extend(cmd.words.iter().skip(1).map(|w| {
            shell::expand(w, &|n| {
                vars(n).or_else(|| (!n.is_empty()).then(|| format!("${{{n}}}")))
            })
            .text
        }));
    }
}

/// An image reference without its tag or digest: `ghcr.io/org/app:1.2` → `ghcr.io/org/app`.
#[must_use]
pub fn image_name(image: &str) -> &str {
    let image = image.trim();
    let image = image.split('@').next().unwrap_or(image);
    match image.rfind(':') {
        Some(c) if !image[c..].contains('/') => &image[..c],
        _ => image,
    }
}

/// Whether the text of what a job pushes names one of the images.
fn judge(refs: &[String], images: &[String]) -> Pushes {
    if refs.is_empty() {
        return Pushes::No;
    }
    for r in refs {
        if let Some(i) = images
            .iter()
            .find(|i| !i.is_empty() && r.contains(i.as_str()))
        {
            return Pushes::Yes(i.clone());
        }
    }
    // A name from a variable the file does not define; an unknown tag does not matter.
    let unknown_name = |r: &String| {
        let v = r.split_once('=').map_or(r.as_str(), |(_, v)| v);
        image_name(v).contains("${")
    };
    if refs.iter().any(unknown_name) {
        Pushes::Maybe
    } else {
        Pushes::No
    }
}

fn lookup<'a>(vars: &'a BTreeMap<String, Node>) -> impl Fn(&str) -> Option<String> + 'a {
    move |n| {
        let raw = variable_value(vars.get(n)?)?.scalar_text()?;
        Some(shell::expand_text(raw, None, &|_| None).text).filter(|v| !v.contains('$'))
    }
}

/// Whether a GitLab job pushes one of the images.
#[must_use]
pub fn gitlab(job: &GitlabJob, images: &[String]) -> Pushes {
    let vars = lookup(&job.variables);
    let mut refs = Vec::new();
    for s in &job.scripts {
        if let Some(t) = s.scalar_text() {
            pushed_refs(t, &vars, &mut refs);
        }
    }
    judge(&refs, images)
}

/// Whether a GitHub job pushes one of the images.
#[must_use]
pub fn github(job: &GithubJob, images: &[String]) -> Pushes {
    let mut refs = Vec::new();
    for step in &job.steps {
        let vars = lookup(&step.env);
        if let Some(t) = step.run.as_ref().and_then(Node::scalar_text) {
            pushed_refs(t, &vars, &mut refs);
        }
        let builds = step.action().is_some_and(|a| {
            a == "docker/build-push-action" || a == "redhat-actions/push-to-registry"
        });
        let push = step.input("push").and_then(Node::as_bool) != Some(false);
        if builds && push {
            for k in ["tags", "image", "registry"] {
                if let Some(t) = step.input(k).and_then(Node::scalar_text) {
                    let e = shell::expand_text(t, None, &|n| {
                        vars(n).or_else(|| Some(format!("${{{n}}}")))
                    });
                    refs.push(e.text);
                }
            }
        }
    }
    judge(&refs, images)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_images_a_job_pushes() {
        let repo = crate::model::Repository::in_memory(&[(
            ".gitlab-ci.yml",
            "variables: {IMAGE: registry.example.com/shop/api}\nbuild:\n  script:\n    - docker build -t \"$IMAGE:$CI_COMMIT_SHA\" .\n    - docker push \"$IMAGE:$CI_COMMIT_SHA\"\nkaniko:\n  script:\n    - /kaniko/executor --destination \"$CI_REGISTRY_IMAGE:$CI_COMMIT_SHA\"\nlint:\n  script: [docker run --rm x]\n",
        )]);
        let p = &crate::model::ci::gitlab::pipelines(&repo, &[])[0];
        let images = vec!["registry.example.com/shop/api".to_string()];
        assert_eq!(
            gitlab(&p.jobs[0], &images),
            Pushes::Yes("registry.example.com/shop/api".into())
        );
        assert_eq!(gitlab(&p.jobs[1], &images), Pushes::Maybe);
        assert_eq!(gitlab(&p.jobs[2], &images), Pushes::No);
    }
}
