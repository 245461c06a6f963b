//! Compiled schemas, kept by their canonical text so each schema of an artifact is compiled
//! once, however many threads use it. Only schemas of the artifact (and the engine's own) are
//! cached, so the cache is bounded by the artifact, not by traffic.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use serde_json::Value;

use super::compiled::{CompiledSchema, SchemaCompileError};

/// A shared cache of compiled schemas.
#[derive(Debug, Default)]
pub struct SchemaCache {
    compiled: RwLock<HashMap<String, Arc<CompiledSchema>, foldhash::fast::RandomState>>,
}

impl SchemaCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The compiled form of an artifact schema, compiled on first use.
    ///
    /// # Errors
    ///
    /// [`SchemaCompileError`] when the schema does not compile (never cached).
    pub fn get(&self, schema: &tenx_artifact::Schema) -> Result<Arc<CompiledSchema>, SchemaCompileError> {
        self.get_or_compile(schema.as_json(), || schema.to_value())
    }

    /// The compiled form of a schema given as a value (keyed by its canonical text).
    ///
    /// # Errors
    ///
    /// [`SchemaCompileError`] when the schema does not compile, or holds a number that is not
    /// finite.
    pub fn get_value(&self, schema: &Value) -> Result<Arc<CompiledSchema>, SchemaCompileError> {
        let text = tenx_artifact::canonical_json(schema)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .ok_or_else(|| SchemaCompileError("the schema holds a number that is not finite".to_owned()))?;
        self.get_or_compile(&text, || schema.clone())
    }

    /// How many schemas are compiled.
    pub fn len(&self) -> usize {
        self.compiled.read().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether nothing is compiled yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn get_or_compile(
        &self,
        key: &str,
        value: impl FnOnce() -> Value,
    ) -> Result<Arc<CompiledSchema>, SchemaCompileError> {
        if let Some(found) = self.compiled.read().unwrap_or_else(PoisonError::into_inner).get(key) {
            return Ok(Arc::clone(found));
        }
        let compiled = Arc::new(CompiledSchema::compile(&value())?);
        let mut map = self.compiled.write().unwrap_or_else(PoisonError::into_inner);
        Ok(Arc::clone(map.entry(key.to_owned()).or_insert(compiled)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn compiles_each_schema_once() {
        let cache = SchemaCache::new();
        let schema = tenx_artifact::Schema::from_value(&json!({"type": "string"}));
        let first = cache.get(&schema).unwrap();
        let second = cache.get(&schema).unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        let by_value = cache.get_value(&json!({"type": "string"})).unwrap();
        assert!(Arc::ptr_eq(&first, &by_value));
        assert_eq!(cache.len(), 1);
        assert!(cache.get_value(&json!({"type": 7})).is_err());
        assert_eq!(cache.len(), 1);
    }
}
