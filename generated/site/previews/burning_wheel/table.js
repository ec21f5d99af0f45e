window.rulesdslPreviews("burning_wheel/table.html", {});
